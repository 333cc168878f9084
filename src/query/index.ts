/**
 * The product's query object and query text (PROTOCOL.md 6.2): parsed once, with positions for
 * errors, and compiled to the store-neutral filter every store answers alike. Listings, v2, bulk
 * writes, actions and event subscriptions all compile through here. Code outside this folder imports
 * this entry only.
 */
export { checkFieldName, compileListingQuery, plainEquality, type CompiledQuery, type FolderSelection, type JsonOperator, type QueryParams, type SelectionMacro } from './query-object.js';
export { MAX_PATH_REFERENCES, queryTextWhere } from './parse.js';
