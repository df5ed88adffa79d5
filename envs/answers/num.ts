// Numbers for answer checking: exact rationals (BigInt numerator / denominator) while the
// arithmetic stays rational, floats once it does not (sqrt 2, pi, sin 1, huge powers). Pure; the
// operations never throw (division by zero gives NaN, oversized results fall back to floats).

/** An exact rational n/d (d > 0, gcd 1), or a float. */
export type Num = { readonly kind: 'q'; readonly n: bigint; readonly d: bigint } | { readonly kind: 'f'; readonly x: number };

/** Rationals whose numerator or denominator grow past this many bits become floats. */
const MAX_BITS = 8192;

const abs = (a: bigint) => (a < 0n ? -a : a);

function gcd(a: bigint, b: bigint): bigint {
  a = abs(a);
  b = abs(b);
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

export function bitLength(a: bigint): number {
  return a === 0n ? 0 : abs(a).toString(16).length * 4;
}

export function float(x: number): Num {
  return { kind: 'f', x };
}

/** n/d reduced; a zero denominator gives NaN; oversized values become floats. */
export function rational(n: bigint, d: bigint = 1n): Num {
  if (d === 0n) return float(NaN);
  if (d < 0n) {
    n = -n;
    d = -d;
  }
  const g = gcd(n, d);
  if (g > 1n) {
    n /= g;
    d /= g;
  }
  if (bitLength(n) > MAX_BITS || bitLength(d) > MAX_BITS) return float(ratioToFloat(n, d));
  return { kind: 'q', n, d };
}

export const int = (n: number | bigint): Num => rational(BigInt(n), 1n);

function ratioToFloat(n: bigint, d: bigint): number {
  const shift = Math.max(0, Math.max(bitLength(n), bitLength(d)) - 1000);
  if (shift === 0) return Number(n) / Number(d);
  const s = BigInt(shift);
  return Number(n >> s) / Number(d >> s);
}

export function toFloat(a: Num): number {
  return a.kind === 'f' ? a.x : ratioToFloat(a.n, a.d);
}

export function isExact(a: Num): a is { kind: 'q'; n: bigint; d: bigint } {
  return a.kind === 'q';
}

/** An exact integer. */
export function isInteger(a: Num): boolean {
  return a.kind === 'q' && a.d === 1n;
}

/** A decimal literal ("12.50", "-3", "1e-5", ".5") as an exact rational; null if it is not one. */
export function parseDecimal(text: string): Num | null {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d{1,4}))?$/.exec(text);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return null;
  const digits = `${m[2]}${m[3] ?? ''}` || '0';
  let n = BigInt(digits);
  let d = 10n ** BigInt((m[3] ?? '').length);
  const exp = m[4] ? Number(m[4]) : 0;
  if (exp > 0) n *= 10n ** BigInt(exp);
  else if (exp < 0) d *= 10n ** BigInt(-exp);
  return rational(m[1] === '-' ? -n : n, d);
}

export function neg(a: Num): Num {
  return a.kind === 'q' ? { kind: 'q', n: -a.n, d: a.d } : float(-a.x);
}

export function add(a: Num, b: Num): Num {
  if (a.kind === 'q' && b.kind === 'q') return rational(a.n * b.d + b.n * a.d, a.d * b.d);
  return float(toFloat(a) + toFloat(b));
}

export function sub(a: Num, b: Num): Num {
  return add(a, neg(b));
}

export function mul(a: Num, b: Num): Num {
  if (a.kind === 'q' && b.kind === 'q') return rational(a.n * b.n, a.d * b.d);
  return float(toFloat(a) * toFloat(b));
}

export function div(a: Num, b: Num): Num {
  if (a.kind === 'q' && b.kind === 'q') return b.n === 0n ? float(NaN) : rational(a.n * b.d, a.d * b.n);
  const y = toFloat(b);
  return float(y === 0 ? NaN : toFloat(a) / y);
}

/** The integer k-th root of n >= 0 when it is exact, else null. */
function exactRoot(n: bigint, k: number): bigint | null {
  if (n < 0n) return null;
  if (n < 2n) return n;
  const K = BigInt(k);
  // Newton's method from a float estimate, corrected to the floor root.
  let x = BigInt(Math.max(1, Math.floor(Math.pow(ratioToFloat(n, 1n), 1 / k))));
  for (let i = 0; i < 200; i++) {
    const next = ((K - 1n) * x + n / x ** (K - 1n)) / K;
    if (abs(next - x) <= 1n) {
      x = next;
      break;
    }
    x = next;
  }
  for (let c = x - 2n; c <= x + 2n; c++) if (c >= 0n && c ** K === n) return c;
  return null;
}

/** a^b: exact for rational bases with integer exponents (within size limits) and for exact roots. */
export function pow(a: Num, b: Num): Num {
  if (a.kind === 'q' && b.kind === 'q') {
    if (b.d === 1n) {
      const e = b.n;
      const size = Math.max(bitLength(a.n), bitLength(a.d)) * Number(abs(e));
      if (abs(e) <= 100000n && size <= MAX_BITS) {
        if (e >= 0n) return rational(a.n ** e, a.d ** e);
        if (a.n === 0n) return float(NaN);
        return rational(a.d ** -e, a.n ** -e);
      }
    } else if (b.d <= 64n) {
      // A rational power p/k: the exact k-th root when there is one (odd roots of negatives too).
      const k = Number(b.d);
      const negative = a.n < 0n;
      if (!negative || k % 2 === 1) {
        const rn = exactRoot(abs(a.n), k);
        const rd = exactRoot(a.d, k);
        if (rn !== null && rd !== null) return pow(rational(negative ? -rn : rn, rd), rational(b.n, 1n));
      }
    }
  }
  const x = toFloat(a);
  const y = toFloat(b);
  // A real odd root of a negative number (Math.pow gives NaN): (-8)^(1/3) = -2.
  if (x < 0 && b.kind === 'q' && b.d % 2n === 1n) {
    const r = Math.pow(-x, y);
    return float(b.n % 2n === 0n ? r : -r);
  }
  return float(Math.pow(x, y));
}

export function sqrt(a: Num): Num {
  return pow(a, rational(1n, 2n));
}

/** n! for small non-negative integers (exact up to 500!, then a float). */
export function factorial(a: Num): Num {
  if (!isInteger(a) || a.kind !== 'q' || a.n < 0n) return float(NaN);
  if (a.n > 500n) return float(Infinity);
  let r = 1n;
  for (let i = 2n; i <= a.n; i++) r *= i;
  return rational(r, 1n);
}

export function floor(a: Num): Num {
  if (a.kind === 'q') {
    const q = a.n / a.d;
    return rational(a.n < 0n && q * a.d !== a.n ? q - 1n : q, 1n);
  }
  return float(Math.floor(a.x));
}

export function absNum(a: Num): Num {
  return a.kind === 'q' ? { kind: 'q', n: abs(a.n), d: a.d } : float(Math.abs(a.x));
}

/**
 * An exact rational rounded to `places` decimal places, half to even (as sympy's round does for
 * a Rational), given as the integer value * 10^places.
 */
export function roundToPlaces(a: { n: bigint; d: bigint }, places: number): bigint {
  const scaled = a.n * 10n ** BigInt(places);
  let q = scaled / a.d; // truncated toward zero
  let r = scaled % a.d;
  if (r < 0n) {
    q -= 1n;
    r += a.d;
  }
  // floor(q) now; round up when the remainder is above half, or exactly half and q is odd.
  const twice = 2n * r;
  if (twice > a.d || (twice === a.d && q % 2n !== 0n)) q += 1n;
  return q;
}

export function compareExact(a: Num, b: Num): boolean {
  return a.kind === 'q' && b.kind === 'q' && a.n === b.n && a.d === b.d;
}

/** "7", "-7/3". */
export function formatRational(a: Num): string {
  if (a.kind !== 'q') return String(a.x);
  return a.d === 1n ? a.n.toString() : `${a.n}/${a.d}`;
}

/** The exact decimal of a rational whose denominator has only the factors 2 and 5 ("12.375"); null otherwise. */
export function formatDecimal(a: Num): string | null {
  if (a.kind !== 'q') return null;
  let d = a.d;
  let twos = 0;
  let fives = 0;
  while (d % 2n === 0n) {
    d /= 2n;
    twos++;
  }
  while (d % 5n === 0n) {
    d /= 5n;
    fives++;
  }
  if (d !== 1n) return null;
  const places = Math.max(twos, fives);
  if (places === 0) return a.n.toString();
  const scaled = (abs(a.n) * 10n ** BigInt(places)) / a.d;
  const s = scaled.toString().padStart(places + 1, '0');
  const body = `${s.slice(0, -places)}.${s.slice(-places)}`.replace(/0+$/, '').replace(/\.$/, '');
  return `${a.n < 0n ? '-' : ''}${body}`;
}
