/**
 * Declared classes (PROTOCOL.md 6.8): the `schema` option's shape. Writes to a declared class are
 * checked against it, the model routes answer it, and the OpenAPI document describes its objects.
 * Undeclared classes stay schemaless.
 */

/** The types a declared field may have. */
export const FIELD_TYPES = ['string', 'number', 'integer', 'boolean', 'date', 'json', 'ref', 'set', 'file'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** A field's declaration: its type alone, or the type with its constraints. */
export type FieldDeclaration =
  | FieldType
  | {
      type: FieldType;
      /** A write that leaves it absent (a create, or `storeMode` 10) is `400`. */
      required?: boolean;
      /** `string`: at most this many characters. */
      maxLength?: number;
      /** `number`, `integer`: the smallest and largest values allowed. */
      min?: number;
      max?: number;
      /** `string`, `number`, `integer`: the only values allowed. */
      enum?: readonly (string | number)[];
      /** `ref`, `set`: the class referenced. */
      class?: string;
    };

export interface ClassDeclaration {
  fields: Record<string, FieldDeclaration>;
  /** Fields a store may index (the PostgreSQL store's `indexedFields`). */
  indexes?: readonly string[];
  /** Refuse fields that are not declared. Default false. */
  strict?: boolean;
  /**
   * The class's `ClassID` in the model (1 to 1048575), e.g. the one a product's clients already know.
   * Default: derived from the class name (stable across restarts and instances).
   */
  classId?: number;
}

/** The `schema` option: declarations by class name. */
export type SchemaDeclarations = Record<string, ClassDeclaration>;
