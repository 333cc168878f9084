/**
 * The model (PROTOCOL.md 6.8): declared classes checked on every write, and the structure routes
 * that describe them. Code outside this folder imports this entry only.
 */
export type { ClassDeclaration, FieldDeclaration, FieldType, SchemaDeclarations } from './declarations.js';
export { ClassSchemas, derivedClassId, type FieldSpec } from './schema.js';
export { modelRoutes, type ClassStructure, type ModelMember } from './structure.js';
export { classDeclarationRoutes } from './class-routes.js';
export { MODEL_CLASS, RuntimeModel, storedDeclarations, storedSchemas, type RuntimeClass } from './runtime.js';
export type { ModelContext } from './context.js';
