import type { SchemaDeclarations } from 'odbrest';
export declare const demoSchema: SchemaDeclarations;
