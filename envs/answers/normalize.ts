// Normalising an answer string before it is parsed: LaTeX wrappers and spacing, money and unit
// words, degrees, thousands separators, percent signs (remembered, see NormalizedAnswer), Python
// spellings ("**", "math.sqrt"). Pure; never throws.
import { extractBoxed } from './extract.js';

export interface NormalizedAnswer {
  /** The answer as an expression the parser reads, or as plain text when it is not math. */
  text: string;
  /** The answer was marked as a percentage ("50%", "50\%", "50 percent"). */
  percent: boolean;
}

// Names that are math, not units, when they follow a number ("2 pi", "3 sqrt 2").
const MATH_WORDS = new Set([
  'pi', 'sqrt', 'cbrt', 'sin', 'cos', 'tan', 'sec', 'csc', 'cot', 'arcsin', 'arccos', 'arctan', 'sinh', 'cosh', 'tanh',
  'ln', 'log', 'exp', 'abs', 'floor', 'ceil', 'infty', 'infinity', 'inf', 'oo', 'and', 'or', 'e', 'i', 'cup', 'cap', 'pm', 'mp',
]);
// Units written straight after a number ("5cm", "12km/h", "3kg", "7cm^2"). Single letters
// (m, g, s, h) are left alone: they could be variables.
const GLUED_UNIT =
  /(\d)\s*(?:cm|mm|km|kg|mg|lbs?|oz|ft|yd|mi|mph|kph|km\/h|m\/s|secs?|mins?|hrs?|ml|mL|cents?|dollars?|units?|degrees?|meters?|metres?|inches|feet|hours?|minutes?|seconds?|days?|weeks?|months?|years?)(?:\^\{?[23]\}?|[²³])?$/;
const TEXT_WRAPPER = /\\(?:text|textbf|textit|textrm|textnormal|textsf|mathrm|mathbf|mathit|mathsf|mathbb|mbox|hbox|operatorname)\s*\{([^{}]*)\}/g;
const SIZING = /\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|Biggl|Biggr|bigg|Bigg|big|Big)(?![A-Za-z])/g;
const SPACING = /\\(?:displaystyle|textstyle|scriptstyle|quad|qquad)(?![A-Za-z])|\\[!,;:]/g;
const PERCENT = /\\%|%|\bper\s?cent(?:age)?\b/gi;

/** The answer with its wrappers, units and separators removed; see NormalizedAnswer. */
export function normalizeAnswer(raw: string): NormalizedAnswer {
  if (typeof raw !== 'string') return { text: '', percent: false };
  let s = raw.trim();
  if (/^\\(?:boxed|fbox)\b/.test(s)) s = extractBoxed(s) ?? s;

  s = s
    .replace(/[\u2212\u2013\u2014]/g, '-')
    .replace(/[\u00d7\u22c5\u00b7]/g, '*')
    .replace(/\u00f7/g, '/')
    .replace(/\u03c0/g, '\\pi ')
    .replace(/\u221e/g, '\\infty ')
    .replace(/\u221a/g, '\\sqrt')
    .replace(/\u00b1/g, '\\pm ')
    .replace(/[\u20ac\u00a3\u00a5\u20b9]/g, '');

  // Delimiters, sizing and spacing.
  s = s.replace(/\\(?:left|right)\s*\./g, '').replace(SIZING, '');
  s = s.replace(/\\\$/g, '').replace(/\$/g, '').replace(/\\\(|\\\)|\\\[|\\\]/g, '');
  s = s.replace(SPACING, '').replace(/\\ /g, ' ').replace(/~/g, ' ');
  s = s.replace(/\{,\}/g, ',');

  // A unit in a trailing \text{...}, \mathrm{...} or \mbox{...} ("6\ \mathrm{m}", "5\text{ cm}^2") is
  // dropped when something comes before it (math_verify's units rule); "\text{(A)}" alone stays.
  s = dropTrailingTextUnit(s);

  // \text{...} and friends: their content, spaced (units inside are removed below).
  for (let i = 0; i < 4; i++) {
    const before = s;
    s = s.replace(TEXT_WRAPPER, ' $1 ');
    if (s === before) break;
  }

  // Degrees.
  s = s.replace(/\^\s*\{\s*\\circ\s*\}/g, '').replace(/\^\s*\\circ/g, '').replace(/\\circ|\\degree|\u00b0/g, '');

  // Percentages: remembered, then removed.
  let percent = false;
  s = s.replace(PERCENT, () => {
    percent = true;
    return ' ';
  });

  // Python spellings.
  s = s.replace(/\*\*/g, '^').replace(/\b(?:math|numpy|np|sympy|sp|fractions)\./g, '');

  // \frac12, \frac1{x}, \sqrt2.
  s = s.replace(/\\[dt]?frac\s*(\d)\s*(\d)/g, '\\frac{$1}{$2}').replace(/\\[dt]?frac\s*(\d)\s*(?=[{\\])/g, '\\frac{$1}');
  s = s.replace(/\\sqrt\s*(\d)/g, '\\sqrt{$1}');
  // Mixed numbers: 2\frac{1}{2} and "2 1/2" are 2 + 1/2.
  s = s.replace(/(^|[^\d.^_{}A-Za-z\\])(\d+)\s*\\[dt]?frac\{(\d+)\}\{(\d+)\}/g, '$1($2+\\frac{$3}{$4})');
  s = s.replace(/^([+-]?)(\d+)\s+(\d+)\s*\/\s*(\d+)$/, '$1($2+$3/$4)');

  // "2 and 3", "2 or 3" are a list.
  s = s.replace(/\s+(?:and|or)\s+/gi, ', ');

  // Thousands separators in a leading number: 1,000,000 and 1,234.5.
  s = s.replace(/^([+-]?\d{1,3})((?:,\d{3})+)(?![\d]|,\d)/, (_m, head: string, groups: string) => head + groups.replace(/,/g, ''));

  s = stripUnits(s.replace(/\s+/g, ' ').trim());
  s = s.replace(/\s*\.$/, '').trim();
  return { text: s, percent };
}

const TRAILING_TEXT = /\\(?:text|mathrm|mbox)\s*\{[^{}]*\}\s*(?:\^\s*\{?\d\}?)?\s*$/;

function dropTrailingTextUnit(s: string): string {
  const m = TRAILING_TEXT.exec(s);
  if (!m) return s;
  const rest = s.slice(0, m.index).trim();
  // Only after a value ("6", "\frac{1}{2}", "x^2"), not after an operator or a comma.
  return rest !== '' && /[\w})\]]$/.test(rest) ? rest : s;
}

/** Removes unit words around a number: "5 cm", "20 dollars", "12 km/h", "5cm^2", "USD 50". */
export function stripUnits(s: string): string {
  // Trailing words after whitespace, starting with a word of 2+ letters that is not math.
  const trailing = /\s+([A-Za-z]{2,})[A-Za-z\s./^0-9\u00b2\u00b3]*$/.exec(s);
  if (trailing && trailing.index > 0 && !MATH_WORDS.has(trailing[1].toLowerCase()) && /[\d}]/.test(s.slice(0, trailing.index))) {
    s = s.slice(0, trailing.index).trim();
  }
  s = s.replace(GLUED_UNIT, '$1');
  // A leading currency or unit word before a number.
  const leading = /^([A-Za-z]{2,})\.?\s+(?=[-+\d.\\(])/.exec(s);
  if (leading && !MATH_WORDS.has(leading[1].toLowerCase())) s = s.slice(leading[0].length);
  return s;
}
