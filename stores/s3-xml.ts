/**
 * The few fields S3's XML answers carry that the S3 blob store reads (error codes, upload ids, listing
 * entries). S3's answers are flat and regular: each wanted element is a leaf or a block with no element
 * of its own name inside, so a non-greedy match finds it; no DTDs, entities beyond the five XML ones
 * and numeric references, or namespaces prefixes are interpreted.
 */

/** The inner XML of each `<name>...</name>` in `xml`, in order (`<name/>` gives an empty one). */
export function xmlBlocks(xml: string, name: string): string[] {
  const blocks: string[] = [];
  for (const match of xml.matchAll(new RegExp(`<${name}(?:\\s[^>]*)?(?:/>|>([\\s\\S]*?)</${name}>)`, 'g'))) blocks.push(match[1] ?? '');
  return blocks;
}

/** The text of the first `<name>` in `xml`, its entities decoded; `undefined` when there is none. */
export function xmlText(xml: string, name: string): string | undefined {
  const [block] = xmlBlocks(xml, name);
  return block === undefined ? undefined : decodeEntities(block.trim());
}

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (entity, body: string) => {
    if (body[0] !== '#') return NAMED[body]!;
    const code = body[1] === 'x' ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
    return code <= 0x10ffff ? String.fromCodePoint(code) : entity;
  });
}
