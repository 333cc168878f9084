import type { AccessOptions } from 'odbrest';
export declare const demoAccess: AccessOptions & { rules: NonNullable<AccessOptions['rules']> };
