// Imported second by the full CLI (main.ts), before the command tree loads: see young-generation.ts.
import { keepYoungGenerationSmall } from "./young-generation.js";

keepYoungGenerationSmall();
