// The types of assets.generated.js, which `npm run build` makes from studio/ (scripts/build-studio.mjs).

/** The build: a hash of all its files, and the entry script and style sheet index.html loads. */
export declare const studioBuild: { hash: string; script: string; style?: string };
/** Every file of the build by its hashed name: its media type and text. */
export declare const studioFiles: Readonly<Record<string, { type: string; text: string }>>;
