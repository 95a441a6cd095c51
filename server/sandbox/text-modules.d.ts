// Text imports of the sandbox prelude and the skill files (`with { type: "text" }`): embedded in a compiled binary.
declare module "*.py" {
  const text: string;
  export default text;
}
declare module "*.md" {
  const text: string;
  export default text;
}
