/**
 * JSON Schema support: conversion to the model's generation schema, output ordering and validation.
 * @module
 */
export { convertSchema, type SchemaConversion, SchemaError, toolArgumentsTypeName } from "./convert.ts";
export { sanitizeTypeName } from "./names.ts";
export { orderBySchema } from "./order.ts";
export { compileValidator, type Validator } from "./validate.ts";
