import DOMPurify from 'dompurify';
import { marked } from 'marked';

// Links an agent sends open in a new tab, without giving that tab a handle on this page.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.hasAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

/**
 * Agent markup made safe to insert: no script, no event handler, no javascript: URL (DOMPurify), and
 * no <style> or <form>, which could restyle or imitate the page around it.
 */
export function sanitizeHtml(html: string): string {
  return DOMPurify.sanitize(html, { FORBID_TAGS: ['style', 'form'], USE_PROFILES: { html: true } });
}

/** A text part's Markdown as sanitized HTML (raw HTML inside Markdown is sanitized too). */
export function renderMarkdown(markdown: string): string {
  return sanitizeHtml(marked.parse(markdown, { async: false, gfm: true, breaks: true }));
}
