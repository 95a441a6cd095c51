// Text imports (`import sql from "./0001_x.sql" with { type: "text" }`) embed files in a compiled binary.
declare module "*.sql" {
  const text: string;
  export default text;
}

// File imports (`with { type: "file" }`) give a path, embedded in a compiled binary.
declare module "*.css" {
  const path: string;
  export default path;
}
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const path: string;
  export default path;
}
declare module "*.png" {
  const path: string;
  export default path;
}
