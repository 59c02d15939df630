import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root (this file runs from dist/test/unit/). */
const root = fileURLToPath(new URL('../../../', import.meta.url));

/** The front door and the documents it leads to. */
const documents = ['README.md', 'bench/README.md', ...readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

/** Lines outside fenced code blocks. */
function proseLines(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
function headingSlug(heading: string): string {
  const text = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
  return text.toLowerCase().replace(/[^\p{L}\p{N}\p{M} _-]/gu, '').replace(/ /g, '-');
}

/** Every anchor a Markdown file's headings give (a repeated heading gets -1, -2, …). */
function anchorsOf(path: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(readFileSync(path, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = headingSlug(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count ? `${slug}-${count}` : slug);
  }
  return anchors;
}

/** Relative links of a Markdown file (not in code), each as written. */
function relativeLinks(text: string): string[] {
  const links: string[] = [];
  for (const line of proseLines(text)) {
    for (const match of line.replace(/`[^`]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1]!;
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) links.push(target);
    }
  }
  return links;
}

describe('documentation links', () => {
  it('every relative link in README.md, docs/*.md and bench/README.md reaches a file, and its #anchor a heading there', () => {
    const broken: string[] = [];
    let checked = 0;
    for (const document of documents) {
      const path = join(root, document);
      for (const link of relativeLinks(readFileSync(path, 'utf8'))) {
        checked += 1;
        const [file, anchor] = link.split('#') as [string, string | undefined];
        const target = file ? join(dirname(path), decodeURIComponent(file)) : path;
        if (!existsSync(target)) {
          broken.push(`${document}: ${link} (no ${relative(root, target)})`);
          continue;
        }
        if (anchor !== undefined && (statSync(target).isDirectory() || !target.endsWith('.md') || !anchorsOf(target).has(anchor))) {
          broken.push(`${document}: ${link} (no heading #${anchor} in ${relative(root, target)})`);
        }
      }
    }
    assert.ok(checked > 20, `only ${checked} links found: the link pattern is wrong`);
    assert.deepEqual(broken, []);
  });
});
