// The types of src/schema/ajv.generated.js: the pinned npm package's own (see scripts/build_ajv.ts).
export { Ajv, type ErrorObject, type ValidateFunction } from "npm:ajv@8.20.0";
