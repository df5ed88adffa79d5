// What the dashboard's pages share: table cells, links, the message line. Text is set as text,
// never as HTML, so run and episode ids show as they are.

/** A table cell with TEXT (a string, or a node), right-aligned unless CLASSES says `l`. */
export function cell(content, classes = '') {
  const td = document.createElement('td');
  if (classes) td.className = classes;
  td.append(content);
  return td;
}

export function link(href, text) {
  const a = document.createElement('a');
  a.href = href;
  a.textContent = text;
  return a;
}

/** The page's message line (#message): what a button did, or what went wrong (ERROR). */
export function showMessage(text, error = false) {
  const p = document.getElementById('message');
  p.textContent = text;
  p.className = error ? 'error' : '';
}

/** A number with 3 decimals; – for none. */
export const num = (x) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(3) : '–');
