import type { OutputPart } from '../api/types';
import { renderMarkdown, sanitizeHtml } from '../render/sanitize';

/** An agent's output: Markdown text, sanitized HTML and images, in order. */
export function OutputParts({ parts }: { parts: OutputPart[] }) {
  return (
    <div class="output">
      {parts.map((part, index) => (
        <OutputPartView key={index} part={part} />
      ))}
    </div>
  );
}

function OutputPartView({ part }: { part: OutputPart }) {
  switch (part.type) {
    case 'text':
      return <div class="part part-text" dangerouslySetInnerHTML={{ __html: renderMarkdown(part.text) }} />;
    case 'html':
      return <div class="part part-html" dangerouslySetInnerHTML={{ __html: sanitizeHtml(part.html) }} />;
    case 'image': {
      const src = imageSource(part);
      return src ? <img class="part part-image" src={src} alt="Image from the agent" /> : <p class="part">(An image in a format that cannot be shown.)</p>;
    }
  }
}

function imageSource(part: Extract<OutputPart, { type: 'image' }>): string | undefined {
  if ('url' in part) return /^https?:\/\//i.test(part.url) ? part.url : undefined;
  if (!/^image\/[\w.+-]+$/i.test(part.mimeType)) return undefined;
  return `data:${part.mimeType};base64,${part.data.replace(/[^A-Za-z0-9+/=]/g, '')}`;
}
