/** `import href from 'x.css?url'` (scripts/build-studio.mjs): the address of the file, a hashed file of the build, relative to the chunk. */
declare module '*?url' {
  const href: string;
  export default href;
}
