import { countTokens } from "./server/search/index/units.ts";
const s = "Kalomi Renvo is a person known for the Brador and the Kalomi affair. ".repeat(700);
countTokens("warm");
let t0 = performance.now(); const n = countTokens(s); console.log(n, performance.now()-t0);
t0 = performance.now(); for (let i=0;i<700;i++) countTokens("Kalomi Renvo is a person known for the Brador and the Kalomi affair."); console.log(performance.now()-t0);
