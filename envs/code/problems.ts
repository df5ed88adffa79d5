// The built-in problem set of the code environment: small stdin/stdout programming problems
// written for Tandem (statements, golden solutions and hidden tests), for smoke runs, warm-up
// and tests. Real training and evaluation sets come from files (envs/code/dataset.ts).
// test/unit/code.unit.test.ts runs every golden solution on its tests. Pure data: no I/O.
import type { CodeProblem, CodeTest } from './types.js';

interface Spec {
  id: string;
  task: string;
  input: string;
  output: string;
  example: [string, string];
  golden: string;
  tests: [string, string][];
}

function problem(s: Spec): CodeProblem {
  const statement = [s.task, `Input\n${s.input}`, `Output\n${s.output}`, `Example\nInput:\n${s.example[0]}\nOutput:\n${s.example[1]}`].join('\n\n');
  const tests: CodeTest[] = s.tests.map(([input, output]) => ({ input, output }));
  return { id: s.id, statement, golden: s.golden.trim() + '\n', tests };
}

const SPECS: Spec[] = [
  // ------------------------------------------------------------ strings
  {
    id: 'reverse-words',
    task: 'A line of text holds words separated by single spaces. Print the words in reverse order.',
    input: 'One line with 1 to 100 words; a word is made of letters and digits.',
    output: 'The words in reverse order, separated by single spaces.',
    example: ['I like tea', 'tea like I'],
    golden: String.raw`
print(' '.join(input().split()[::-1]))
`,
    tests: [
      ['hello world\n', 'world hello\n'],
      ['one\n', 'one\n'],
      ['a b c d e\n', 'e d c b a\n'],
      ['the quick brown fox\n', 'fox brown quick the\n'],
      ['123 abc 45\n', '45 abc 123\n'],
    ],
  },
  {
    id: 'letter-palindrome',
    task: 'Ignore every character of the line that is not a letter (a-z, A-Z), and ignore case. Is what remains the same read forwards and backwards? A line without letters counts as a palindrome.',
    input: 'One line of 1 to 1000 printable characters.',
    output: 'YES or NO.',
    example: ['Race car!', 'YES'],
    golden: String.raw`
import sys
line = sys.stdin.readline()
letters = [c.lower() for c in line if c.isascii() and c.isalpha()]
print('YES' if letters == letters[::-1] else 'NO')
`,
    tests: [
      ['A man, a plan, a canal: Panama\n', 'YES\n'],
      ['hello\n', 'NO\n'],
      ['12321\n', 'YES\n'],
      ['Was it a car or a cat I saw?\n', 'YES\n'],
      ['ab\n', 'NO\n'],
      ['Noon\n', 'YES\n'],
    ],
  },
  {
    id: 'count-vowels',
    task: 'Count the vowels of a line: the letters a, e, i, o and u, in lower or upper case.',
    input: 'One line of 1 to 1000 printable characters.',
    output: 'The number of vowels.',
    example: ['banana', '3'],
    golden: String.raw`
import sys
print(sum(1 for c in sys.stdin.readline() if c in 'aeiouAEIOU'))
`,
    tests: [
      ['Hello World\n', '3\n'],
      ['rhythm\n', '0\n'],
      ['AEIOU aeiou\n', '10\n'],
      ['Programming is fun\n', '5\n'],
      ['Education\n', '5\n'],
    ],
  },
  {
    id: 'run-length-encode',
    task: 'Replace every maximal run of equal letters of a string by the letter followed by the length of the run.',
    input: 'One line: a string of 1 to 1000 lowercase letters.',
    output: 'The encoded string.',
    example: ['xxy', 'x2y1'],
    golden: String.raw`
from itertools import groupby
s = input().strip()
print(''.join(ch + str(len(list(run))) for ch, run in groupby(s)))
`,
    tests: [
      ['aaabcc\n', 'a3b1c2\n'],
      ['a\n', 'a1\n'],
      ['abcd\n', 'a1b1c1d1\n'],
      ['zzzzzzzzzzzz\n', 'z12\n'],
      ['aabbaa\n', 'a2b2a2\n'],
    ],
  },
  {
    id: 'run-length-decode',
    task: 'A string is encoded as pairs: a lowercase letter followed by a positive count (the count may have several digits). Print the decoded string, in which each letter is repeated count times.',
    input: 'One line: the encoded string; the decoded string has at most 10000 letters.',
    output: 'The decoded string.',
    example: ['m2n3', 'mmnnn'],
    golden: String.raw`
import re
s = input().strip()
print(''.join(ch * int(n) for ch, n in re.findall(r'([a-z])(\d+)', s)))
`,
    tests: [
      ['a3b1c2\n', 'aaabcc\n'],
      ['x1\n', 'x\n'],
      ['z12\n', 'zzzzzzzzzzzz\n'],
      ['a2b2a2\n', 'aabbaa\n'],
      ['q10r1\n', 'qqqqqqqqqqr\n'],
    ],
  },
  {
    id: 'caesar-shift',
    task: 'Shift every letter of a text k places forward in the alphabet, wrapping around from z to a, and keep its case. Other characters stay as they are.',
    input: 'The first line holds k (0 <= k <= 1000). The second line holds the text (1 to 1000 printable characters).',
    output: 'The shifted text.',
    example: ['2\nyes', 'agu'],
    golden: String.raw`
k = int(input()) % 26
s = input()
out = []
for c in s:
    if 'a' <= c <= 'z':
        out.append(chr((ord(c) - 97 + k) % 26 + 97))
    elif 'A' <= c <= 'Z':
        out.append(chr((ord(c) - 65 + k) % 26 + 65))
    else:
        out.append(c)
print(''.join(out))
`,
    tests: [
      ['3\nabc xyz\n', 'def abc\n'],
      ['1\nHello, World!\n', 'Ifmmp, Xpsme!\n'],
      ['26\nSame\n', 'Same\n'],
      ['13\nUryyb\n', 'Hello\n'],
      ['0\nNo change 123\n', 'No change 123\n'],
      ['27\nZz\n', 'Aa\n'],
    ],
  },
  {
    id: 'anagrams',
    task: 'Two words are anagrams when they are made of the same letters, each the same number of times, ignoring case. Are the two given words anagrams?',
    input: 'One line with two words separated by a space; each has 1 to 100 letters.',
    output: 'YES or NO.',
    example: ['night thing', 'YES'],
    golden: String.raw`
a, b = input().split()
print('YES' if sorted(a.lower()) == sorted(b.lower()) else 'NO')
`,
    tests: [
      ['listen silent\n', 'YES\n'],
      ['apple paple\n', 'YES\n'],
      ['abc abd\n', 'NO\n'],
      ['Dusty study\n', 'YES\n'],
      ['aab abb\n', 'NO\n'],
      ['a a\n', 'YES\n'],
    ],
  },
  {
    id: 'longest-word',
    task: 'Print the longest word of a line. When several words have the greatest length, print the first of them.',
    input: 'One line with 1 to 100 words separated by single spaces; a word is made of letters.',
    output: 'The longest word.',
    example: ['to be or not', 'not'],
    golden: String.raw`
words = input().split()
print(max(words, key=len))
`,
    tests: [
      ['I love programming puzzles\n', 'programming\n'],
      ['cat dog emu\n', 'cat\n'],
      ['a bb ccc dd\n', 'ccc\n'],
      ['single\n', 'single\n'],
      ['tie ties tied\n', 'ties\n'],
    ],
  },
  {
    id: 'letter-frequency',
    task: 'Count how many times each letter occurs in a line of lowercase letters and spaces.',
    input: 'One line of 1 to 1000 characters, each a lowercase letter or a space, with at least one letter.',
    output: 'For each letter that occurs, in alphabetical order, one line with the letter and its count separated by a space.',
    example: ['abca', 'a 2\nb 1\nc 1'],
    golden: String.raw`
from collections import Counter
counts = Counter(c for c in input() if c != ' ')
for ch in sorted(counts):
    print(ch, counts[ch])
`,
    tests: [
      ['hello\n', 'e 1\nh 1\nl 2\no 1\n'],
      ['banana\n', 'a 3\nb 1\nn 2\n'],
      ['a b a\n', 'a 2\nb 1\n'],
      ['zzz\n', 'z 3\n'],
      ['the cat\n', 'a 1\nc 1\ne 1\nh 1\nt 2\n'],
    ],
  },
  {
    id: 'camel-to-snake',
    task: 'Convert a camelCase identifier to snake_case: put an underscore before every uppercase letter and make that letter lowercase.',
    input: 'One line: an identifier of 1 to 100 letters whose first letter is lowercase.',
    output: 'The identifier in snake_case.',
    example: ['myVariableName', 'my_variable_name'],
    golden: String.raw`
s = input().strip()
print(''.join('_' + c.lower() if c.isupper() else c for c in s))
`,
    tests: [
      ['helloWorld\n', 'hello_world\n'],
      ['simple\n', 'simple\n'],
      ['parseHttpRequest\n', 'parse_http_request\n'],
      ['aBC\n', 'a_b_c\n'],
      ['getX\n', 'get_x\n'],
    ],
  },
  {
    id: 'count-occurrences',
    task: 'Count the occurrences of a pattern in a text, overlapping occurrences included.',
    input: 'The first line holds the text and the second the pattern; both are strings of 1 to 1000 lowercase letters.',
    output: 'The number of positions of the text at which the pattern starts.',
    example: ['banana\nana', '2'],
    golden: String.raw`
text = input().strip()
pattern = input().strip()
print(sum(1 for i in range(len(text) - len(pattern) + 1) if text[i:i + len(pattern)] == pattern))
`,
    tests: [
      ['aaaa\naa\n', '3\n'],
      ['abababa\naba\n', '3\n'],
      ['hello\nxyz\n', '0\n'],
      ['mississippi\nissi\n', '2\n'],
      ['abc\nabc\n', '1\n'],
      ['ab\nabc\n', '0\n'],
    ],
  },
  {
    id: 'balanced-brackets',
    task: 'A string of brackets is balanced when every opening bracket is closed by a bracket of the same kind, and pairs nest properly. Is the given string balanced?',
    input: 'One line of 1 to 1000 characters, each one of ( ) [ ] { }.',
    output: 'YES or NO.',
    example: ['(]', 'NO'],
    golden: String.raw`
s = input().strip()
pairs = {')': '(', ']': '[', '}': '{'}
stack = []
ok = True
for c in s:
    if c in '([{':
        stack.append(c)
    elif not stack or stack.pop() != pairs[c]:
        ok = False
        break
print('YES' if ok and not stack else 'NO')
`,
    tests: [
      ['([]{})\n', 'YES\n'],
      ['([)]\n', 'NO\n'],
      ['((\n', 'NO\n'],
      ['{[()()]}\n', 'YES\n'],
      [')(\n', 'NO\n'],
      ['[]{}()\n', 'YES\n'],
    ],
  },
  // ------------------------------------------------------------ arithmetic
  {
    id: 'digit-sum',
    task: 'Print the sum of the decimal digits of a non-negative integer.',
    input: 'One line: the integer, with 1 to 1000 digits.',
    output: 'The sum of its digits.',
    example: ['407', '11'],
    golden: String.raw`
print(sum(int(c) for c in input().strip()))
`,
    tests: [
      ['12345\n', '15\n'],
      ['0\n', '0\n'],
      ['999999999999999999999\n', '189\n'],
      ['1000000\n', '1\n'],
      ['9081726354\n', '45\n'],
    ],
  },
  {
    id: 'gcd-lcm',
    task: 'Print the greatest common divisor and the least common multiple of two positive integers.',
    input: 'One line with a and b (1 <= a, b <= 10^12).',
    output: 'The gcd and the lcm, separated by a space.',
    example: ['4 6', '2 12'],
    golden: String.raw`
from math import gcd
a, b = map(int, input().split())
g = gcd(a, b)
print(g, a // g * b)
`,
    tests: [
      ['12 18\n', '6 36\n'],
      ['7 13\n', '1 91\n'],
      ['100 100\n', '100 100\n'],
      ['1 999999999999\n', '1 999999999999\n'],
      ['1000000000000 999999999999\n', '1 999999999999000000000000\n'],
      ['48 180\n', '12 720\n'],
    ],
  },
  {
    id: 'is-prime',
    task: 'Is the given integer a prime number?',
    input: 'One line with n (1 <= n <= 10^12).',
    output: 'PRIME or NOT PRIME.',
    example: ['15', 'NOT PRIME'],
    golden: String.raw`
n = int(input())
def is_prime(n):
    if n < 2:
        return False
    if n % 2 == 0:
        return n == 2
    d = 3
    while d * d <= n:
        if n % d == 0:
            return False
        d += 2
    return True
print('PRIME' if is_prime(n) else 'NOT PRIME')
`,
    tests: [
      ['2\n', 'PRIME\n'],
      ['1\n', 'NOT PRIME\n'],
      ['97\n', 'PRIME\n'],
      ['1000000007\n', 'PRIME\n'],
      ['999999999989\n', 'PRIME\n'],
      ['1000000\n', 'NOT PRIME\n'],
      ['999966000289\n', 'NOT PRIME\n'],
    ],
  },
  {
    id: 'count-primes',
    task: 'Count the prime numbers that are at most n.',
    input: 'One line with n (1 <= n <= 10^6).',
    output: 'The number of primes p with p <= n.',
    example: ['20', '8'],
    golden: String.raw`
n = int(input())
sieve = bytearray([1]) * (n + 1)
sieve[0] = 0
if n >= 1:
    sieve[1] = 0
i = 2
while i * i <= n:
    if sieve[i]:
        sieve[i * i::i] = bytearray(len(range(i * i, n + 1, i)))
    i += 1
print(sum(sieve))
`,
    tests: [
      ['10\n', '4\n'],
      ['1\n', '0\n'],
      ['2\n', '1\n'],
      ['100\n', '25\n'],
      ['1000000\n', '78498\n'],
      ['30\n', '10\n'],
    ],
  },
  {
    id: 'fizzbuzz',
    task: 'Print the numbers from 1 to n, one per line, but print Fizz instead of a multiple of 3, Buzz instead of a multiple of 5, and FizzBuzz instead of a multiple of both.',
    input: 'One line with n (1 <= n <= 1000).',
    output: 'n lines.',
    example: ['4', '1\n2\nFizz\n4'],
    golden: String.raw`
n = int(input())
for i in range(1, n + 1):
    print('FizzBuzz' if i % 15 == 0 else 'Fizz' if i % 3 == 0 else 'Buzz' if i % 5 == 0 else i)
`,
    tests: [
      ['1\n', '1\n'],
      ['5\n', '1\n2\nFizz\n4\nBuzz\n'],
      ['15\n', '1\n2\nFizz\n4\nBuzz\nFizz\n7\n8\nFizz\nBuzz\n11\nFizz\n13\n14\nFizzBuzz\n'],
      ['3\n', '1\n2\nFizz\n'],
      ['16\n', '1\n2\nFizz\n4\nBuzz\nFizz\n7\n8\nFizz\nBuzz\n11\nFizz\n13\n14\nFizzBuzz\n16\n'],
    ],
  },
  {
    id: 'to-binary',
    task: 'Write a non-negative integer in base 2.',
    input: 'One line with n (0 <= n <= 10^18).',
    output: 'n in binary, without leading zeros (0 is written 0).',
    example: ['6', '110'],
    golden: String.raw`
print(bin(int(input()))[2:])
`,
    tests: [
      ['0\n', '0\n'],
      ['5\n', '101\n'],
      ['255\n', '11111111\n'],
      ['1024\n', '10000000000\n'],
      ['1\n', '1\n'],
      ['1000000000000000000\n', '110111100000101101101011001110100111011001000000000000000000\n'],
    ],
  },
  {
    id: 'factorial-zeros',
    task: 'How many zeros does n! (the product 1 * 2 * ... * n, with 0! = 1) end with in base 10?',
    input: 'One line with n (0 <= n <= 10^18).',
    output: 'The number of trailing zeros of n!.',
    example: ['10', '2'],
    golden: String.raw`
n = int(input())
count = 0
p = 5
while p <= n:
    count += n // p
    p *= 5
print(count)
`,
    tests: [
      ['5\n', '1\n'],
      ['0\n', '0\n'],
      ['25\n', '6\n'],
      ['100\n', '24\n'],
      ['1000\n', '249\n'],
      ['1000000000\n', '249999998\n'],
    ],
  },
  {
    id: 'collatz-steps',
    task: 'Starting from n, repeat until the number is 1: if it is even, halve it; otherwise replace it by 3 times it plus 1. How many steps does it take?',
    input: 'One line with n (1 <= n <= 10^6).',
    output: 'The number of steps.',
    example: ['3', '7'],
    golden: String.raw`
n = int(input())
steps = 0
while n != 1:
    n = n // 2 if n % 2 == 0 else 3 * n + 1
    steps += 1
print(steps)
`,
    tests: [
      ['1\n', '0\n'],
      ['2\n', '1\n'],
      ['6\n', '8\n'],
      ['27\n', '111\n'],
      ['7\n', '16\n'],
    ],
  },
  {
    id: 'digital-root',
    task: 'Replace a non-negative integer by the sum of its decimal digits, again and again, until a single digit remains. Print that digit.',
    input: 'One line: the integer, with 1 to 1000 digits.',
    output: 'The remaining digit.',
    example: ['493193', '2'],
    golden: String.raw`
s = input().strip()
while len(s) > 1:
    s = str(sum(int(c) for c in s))
print(s)
`,
    tests: [
      ['0\n', '0\n'],
      ['9\n', '9\n'],
      ['38\n', '2\n'],
      ['123456789\n', '9\n'],
      ['99999999999999999999\n', '9\n'],
      ['1000000000001\n', '2\n'],
    ],
  },
  {
    id: 'fibonacci',
    task: 'The Fibonacci numbers are F(0) = 0, F(1) = 1 and F(n) = F(n-1) + F(n-2). Print F(n) exactly.',
    input: 'One line with n (0 <= n <= 300).',
    output: 'F(n).',
    example: ['7', '13'],
    golden: String.raw`
n = int(input())
a, b = 0, 1
for _ in range(n):
    a, b = b, a + b
print(a)
`,
    tests: [
      ['0\n', '0\n'],
      ['1\n', '1\n'],
      ['10\n', '55\n'],
      ['50\n', '12586269025\n'],
      ['100\n', '354224848179261915075\n'],
      ['2\n', '1\n'],
    ],
  },
  {
    id: 'perfect-number',
    task: 'Let s be the sum of the proper divisors of n (its positive divisors smaller than n). Classify n: PERFECT when s = n, ABUNDANT when s > n, DEFICIENT when s < n.',
    input: 'One line with n (1 <= n <= 10^9).',
    output: 'PERFECT, ABUNDANT or DEFICIENT.',
    example: ['8', 'DEFICIENT'],
    golden: String.raw`
n = int(input())
s = 0
d = 1
while d * d <= n:
    if n % d == 0:
        s += d
        if d != n // d:
            s += n // d
    d += 1
s -= n
print('PERFECT' if s == n else 'ABUNDANT' if s > n else 'DEFICIENT')
`,
    tests: [
      ['6\n', 'PERFECT\n'],
      ['28\n', 'PERFECT\n'],
      ['12\n', 'ABUNDANT\n'],
      ['1\n', 'DEFICIENT\n'],
      ['13\n', 'DEFICIENT\n'],
      ['33550336\n', 'PERFECT\n'],
      ['945\n', 'ABUNDANT\n'],
    ],
  },
  {
    id: 'power-mod',
    task: 'Compute a to the power b, modulo m (with 0 to the power 0 equal to 1).',
    input: 'One line with a, b and m (0 <= a, b <= 10^18, 1 <= m <= 10^9).',
    output: 'a^b mod m.',
    example: ['2 5 7', '4'],
    golden: String.raw`
a, b, m = map(int, input().split())
print(pow(a, b, m))
`,
    tests: [
      ['2 10 1000\n', '24\n'],
      ['3 0 7\n', '1\n'],
      ['5 3 13\n', '8\n'],
      ['10 18 1\n', '0\n'],
      ['0 5 9\n', '0\n'],
      ['7 1000000000000000000 1000000007\n', '259616729\n'],
    ],
  },
  {
    id: 'roman-to-int',
    task: 'Convert a Roman numeral to an integer. The numerals are I=1, V=5, X=10, L=50, C=100, D=500, M=1000, and the numeral is in standard form (IV=4, IX=9, XL=40, XC=90, CD=400, CM=900).',
    input: 'One line: a Roman numeral for a number from 1 to 3999.',
    output: 'Its value.',
    example: ['IX', '9'],
    golden: String.raw`
values = {'I': 1, 'V': 5, 'X': 10, 'L': 50, 'C': 100, 'D': 500, 'M': 1000}
s = input().strip()
total = 0
for i, c in enumerate(s):
    v = values[c]
    if i + 1 < len(s) and values[s[i + 1]] > v:
        total -= v
    else:
        total += v
print(total)
`,
    tests: [
      ['III\n', '3\n'],
      ['IV\n', '4\n'],
      ['MCMXCIV\n', '1994\n'],
      ['LVIII\n', '58\n'],
      ['MMMCMXCIX\n', '3999\n'],
      ['XLII\n', '42\n'],
    ],
  },
  {
    id: 'int-to-roman',
    task: 'Write an integer as a Roman numeral in standard form: I=1, V=5, X=10, L=50, C=100, D=500, M=1000, with the subtractive forms IV=4, IX=9, XL=40, XC=90, CD=400 and CM=900.',
    input: 'One line with n (1 <= n <= 3999).',
    output: 'The Roman numeral.',
    example: ['14', 'XIV'],
    golden: String.raw`
n = int(input())
table = [(1000, 'M'), (900, 'CM'), (500, 'D'), (400, 'CD'), (100, 'C'), (90, 'XC'),
         (50, 'L'), (40, 'XL'), (10, 'X'), (9, 'IX'), (5, 'V'), (4, 'IV'), (1, 'I')]
out = []
for value, sym in table:
    while n >= value:
        out.append(sym)
        n -= value
print(''.join(out))
`,
    tests: [
      ['1\n', 'I\n'],
      ['4\n', 'IV\n'],
      ['1994\n', 'MCMXCIV\n'],
      ['3888\n', 'MMMDCCCLXXXVIII\n'],
      ['90\n', 'XC\n'],
      ['2024\n', 'MMXXIV\n'],
    ],
  },
  // ------------------------------------------------------------ arrays
  {
    id: 'max-subarray',
    task: 'Find the largest sum of a non-empty run of consecutive elements of an array.',
    input: 'The first line holds n (1 <= n <= 10^5), the second n integers between -10^4 and 10^4.',
    output: 'The largest sum.',
    example: ['4\n1 -2 3 -1', '3'],
    golden: String.raw`
import sys
data = sys.stdin.read().split()
n = int(data[0])
a = list(map(int, data[1:1 + n]))
best = cur = a[0]
for x in a[1:]:
    cur = max(x, cur + x)
    best = max(best, cur)
print(best)
`,
    tests: [
      ['9\n-2 1 -3 4 -1 2 1 -5 4\n', '6\n'],
      ['1\n-5\n', '-5\n'],
      ['5\n1 2 3 4 5\n', '15\n'],
      ['3\n-3 -1 -2\n', '-1\n'],
      ['6\n2 -1 2 -1 2 -10\n', '4\n'],
    ],
  },
  {
    id: 'second-largest',
    task: 'Print the second largest distinct value of an array: the largest value that is smaller than the maximum.',
    input: 'The first line holds n (1 <= n <= 10^5), the second n integers with absolute value at most 10^9.',
    output: 'The second largest distinct value, or NONE when all values are equal.',
    example: ['3\n1 2 3', '2'],
    golden: String.raw`
import sys
data = sys.stdin.read().split()
n = int(data[0])
values = sorted(set(map(int, data[1:1 + n])))
print(values[-2] if len(values) > 1 else 'NONE')
`,
    tests: [
      ['5\n3 1 4 1 5\n', '4\n'],
      ['3\n7 7 7\n', 'NONE\n'],
      ['1\n42\n', 'NONE\n'],
      ['4\n-1 -2 -3 -4\n', '-2\n'],
      ['6\n10 9 10 8 9 10\n', '9\n'],
    ],
  },
  {
    id: 'rotate-right',
    task: 'Rotate an array k places to the right: the last element moves to the front, k times.',
    input: 'The first line holds n and k (1 <= n <= 10^5, 0 <= k <= 10^9), the second n integers.',
    output: 'The rotated array, separated by spaces.',
    example: ['4 1\n1 2 3 4', '4 1 2 3'],
    golden: String.raw`
import sys
data = sys.stdin.read().split()
n, k = int(data[0]), int(data[1])
a = data[2:2 + n]
k %= n
print(' '.join(a[n - k:] + a[:n - k]))
`,
    tests: [
      ['5 2\n1 2 3 4 5\n', '4 5 1 2 3\n'],
      ['3 0\n1 2 3\n', '1 2 3\n'],
      ['3 3\n1 2 3\n', '1 2 3\n'],
      ['4 5\n10 20 30 40\n', '40 10 20 30\n'],
      ['1 100\n7\n', '7\n'],
    ],
  },
  {
    id: 'pair-sum-count',
    task: 'Count the pairs of positions i < j of an array whose elements add up to t.',
    input: 'The first line holds n and t (1 <= n <= 10^5, |t| <= 10^9), the second n integers with absolute value at most 10^9.',
    output: 'The number of pairs.',
    example: ['3 3\n1 2 1', '2'],
    golden: String.raw`
import sys
from collections import Counter
data = sys.stdin.read().split()
n, t = int(data[0]), int(data[1])
seen = Counter()
pairs = 0
for x in map(int, data[2:2 + n]):
    pairs += seen[t - x]
    seen[x] += 1
print(pairs)
`,
    tests: [
      ['4 5\n1 2 3 4\n', '2\n'],
      ['5 4\n2 2 2 2 2\n', '10\n'],
      ['3 100\n1 2 3\n', '0\n'],
      ['6 0\n-1 1 -2 2 0 0\n', '3\n'],
      ['1 2\n1\n', '0\n'],
    ],
  },
  {
    id: 'range-sums',
    task: 'Answer range-sum queries on an array: for each query l r, print the sum of the elements at positions l to r (1-based, both included).',
    input: 'The first line holds n and q (1 <= n, q <= 10^5), the second n integers with absolute value at most 10^9, then q lines with l and r (1 <= l <= r <= n).',
    output: 'q lines, the sums in query order.',
    example: ['3 1\n1 2 3\n2 3', '5'],
    golden: String.raw`
import sys
data = sys.stdin.read().split()
n, q = int(data[0]), int(data[1])
prefix = [0]
for x in data[2:2 + n]:
    prefix.append(prefix[-1] + int(x))
out = []
pos = 2 + n
for _ in range(q):
    l, r = int(data[pos]), int(data[pos + 1])
    pos += 2
    out.append(str(prefix[r] - prefix[l - 1]))
print('\n'.join(out))
`,
    tests: [
      ['5 3\n1 2 3 4 5\n1 5\n2 3\n4 4\n', '15\n5\n4\n'],
      ['1 1\n-7\n1 1\n', '-7\n'],
      ['4 2\n10 -10 10 -10\n1 4\n1 3\n', '0\n10\n'],
      ['3 3\n5 5 5\n1 1\n1 2\n1 3\n', '5\n10\n15\n'],
    ],
  },
  {
    id: 'merge-intervals',
    task: 'Merge overlapping closed intervals. Two intervals that share a point (even only an endpoint) overlap.',
    input: 'The first line holds n (1 <= n <= 10^4), then n lines with l and r (0 <= l <= r <= 10^9).',
    output: 'The merged intervals sorted by start, one per line as "l r".',
    example: ['2\n1 2\n3 4', '1 2\n3 4'],
    golden: String.raw`
import sys
data = list(map(int, sys.stdin.read().split()))
n = data[0]
intervals = sorted(zip(data[1:1 + 2 * n:2], data[2:2 + 2 * n:2]))
merged = []
for l, r in intervals:
    if merged and l <= merged[-1][1]:
        merged[-1][1] = max(merged[-1][1], r)
    else:
        merged.append([l, r])
for l, r in merged:
    print(l, r)
`,
    tests: [
      ['3\n1 3\n2 6\n8 10\n', '1 6\n8 10\n'],
      ['2\n1 4\n4 5\n', '1 5\n'],
      ['1\n5 5\n', '5 5\n'],
      ['4\n5 6\n1 2\n3 4\n2 3\n', '1 4\n5 6\n'],
      ['3\n1 10\n2 3\n4 5\n', '1 10\n'],
    ],
  },
  {
    id: 'majority-element',
    task: 'Find the value that occurs more than n/2 times in an array of n integers.',
    input: 'The first line holds n (1 <= n <= 10^5), the second n integers with absolute value at most 10^9.',
    output: 'That value, or NONE when there is none.',
    example: ['3\n1 1 2', '1'],
    golden: String.raw`
import sys
from collections import Counter
data = sys.stdin.read().split()
n = int(data[0])
value, count = Counter(map(int, data[1:1 + n])).most_common(1)[0]
print(value if 2 * count > n else 'NONE')
`,
    tests: [
      ['5\n3 3 4 2 3\n', '3\n'],
      ['4\n1 2 1 2\n', 'NONE\n'],
      ['1\n9\n', '9\n'],
      ['7\n2 2 1 1 1 2 2\n', '2\n'],
      ['6\n5 5 5 1 2 3\n', 'NONE\n'],
    ],
  },
  {
    id: 'distinct-count',
    task: 'How many distinct values does an array hold?',
    input: 'The first line holds n (1 <= n <= 10^5), the second n integers with absolute value at most 10^9.',
    output: 'The number of distinct values.',
    example: ['3\n7 7 7', '1'],
    golden: String.raw`
import sys
data = sys.stdin.read().split()
n = int(data[0])
print(len(set(map(int, data[1:1 + n]))))
`,
    tests: [
      ['5\n1 2 2 3 3\n', '3\n'],
      ['1\n0\n', '1\n'],
      ['4\n-1 1 -1 1\n', '2\n'],
      ['6\n1 2 3 4 5 6\n', '6\n'],
      ['5\n1000000000 -1000000000 0 0 1000000000\n', '3\n'],
    ],
  },
  {
    id: 'missing-number',
    task: 'All the integers from 1 to n but one are given, in some order. Which one is missing?',
    input: 'The first line holds n (1 <= n <= 10^5); the second line holds the n-1 given integers (it is empty when n = 1).',
    output: 'The missing integer.',
    example: ['3\n3 1', '2'],
    golden: String.raw`
import sys
data = sys.stdin.read().split()
n = int(data[0])
print(n * (n + 1) // 2 - sum(map(int, data[1:n])))
`,
    tests: [
      ['5\n1 2 4 5\n', '3\n'],
      ['2\n2\n', '1\n'],
      ['1\n\n', '1\n'],
      ['6\n6 5 4 3 2\n', '1\n'],
      ['4\n3 1 2\n', '4\n'],
    ],
  },
  // ------------------------------------------------------------ sorting
  {
    id: 'sort-by-frequency',
    task: 'Sort an array so that values occurring more often come first; values occurring equally often come in increasing order. Every occurrence is kept.',
    input: 'The first line holds n (1 <= n <= 10^5), the second n integers with absolute value at most 10^9.',
    output: 'The sorted array, separated by spaces.',
    example: ['3\n2 1 2', '2 2 1'],
    golden: String.raw`
import sys
from collections import Counter
data = sys.stdin.read().split()
n = int(data[0])
a = list(map(int, data[1:1 + n]))
counts = Counter(a)
print(' '.join(map(str, sorted(a, key=lambda x: (-counts[x], x)))))
`,
    tests: [
      ['6\n4 6 2 6 4 4\n', '4 4 4 6 6 2\n'],
      ['5\n1 2 3 4 5\n', '1 2 3 4 5\n'],
      ['4\n5 5 -1 -1\n', '-1 -1 5 5\n'],
      ['1\n8\n', '8\n'],
      ['7\n3 1 3 2 1 3 2\n', '3 3 3 1 1 2 2\n'],
    ],
  },
  {
    id: 'kth-smallest',
    task: 'Print the k-th smallest element of an array (1-based, counting repeated values once per occurrence).',
    input: 'The first line holds n and k (1 <= k <= n <= 10^5), the second n integers with absolute value at most 10^9.',
    output: 'The k-th smallest element.',
    example: ['3 1\n5 3 9', '3'],
    golden: String.raw`
import sys
data = sys.stdin.read().split()
n, k = int(data[0]), int(data[1])
print(sorted(map(int, data[2:2 + n]))[k - 1])
`,
    tests: [
      ['5 2\n3 1 4 1 5\n', '1\n'],
      ['5 3\n3 1 4 1 5\n', '3\n'],
      ['1 1\n-4\n', '-4\n'],
      ['4 4\n10 20 30 40\n', '40\n'],
      ['6 4\n9 8 7 6 5 4\n', '7\n'],
    ],
  },
  {
    id: 'ranking',
    task: 'Rank players by score: higher scores first, and players with equal scores in alphabetical order of name.',
    input: 'The first line holds n (1 <= n <= 10^4), then n lines with a name (1 to 20 lowercase letters, all different) and an integer score (0 to 10^6).',
    output: 'The names in rank order, one per line.',
    example: ['2\nx 5\ny 7', 'y\nx'],
    golden: String.raw`
import sys
lines = sys.stdin.read().split('\n')
n = int(lines[0])
players = []
for line in lines[1:1 + n]:
    name, score = line.split()
    players.append((-int(score), name))
for _, name in sorted(players):
    print(name)
`,
    tests: [
      ['3\nalice 90\nbob 95\ncarol 90\n', 'bob\nalice\ncarol\n'],
      ['1\nzed 0\n', 'zed\n'],
      ['4\nd 1\nc 1\nb 2\na 0\n', 'b\nc\nd\na\n'],
      ['3\nanna 100\nanne 100\nann 100\n', 'ann\nanna\nanne\n'],
    ],
  },
  {
    id: 'count-inversions',
    task: 'Count the inversions of an array: the pairs of positions i < j with a[i] > a[j].',
    input: 'The first line holds n (1 <= n <= 2000), the second n integers with absolute value at most 10^9.',
    output: 'The number of inversions.',
    example: ['3\n3 1 2', '2'],
    golden: String.raw`
import sys
data = sys.stdin.read().split()
n = int(data[0])
a = list(map(int, data[1:1 + n]))
print(sum(1 for i in range(n) for j in range(i + 1, n) if a[i] > a[j]))
`,
    tests: [
      ['5\n2 4 1 3 5\n', '3\n'],
      ['3\n1 2 3\n', '0\n'],
      ['4\n4 3 2 1\n', '6\n'],
      ['5\n1 1 1 1 1\n', '0\n'],
      ['6\n3 1 2 3 1 2\n', '7\n'],
    ],
  },
  // ------------------------------------------------------------ dynamic programming
  {
    id: 'climbing-stairs',
    task: 'A staircase has n steps, and each move climbs 1 or 2 steps. In how many different sequences of moves can one climb exactly to the top?',
    input: 'One line with n (1 <= n <= 90).',
    output: 'The number of ways.',
    example: ['4', '5'],
    golden: String.raw`
n = int(input())
a, b = 1, 1
for _ in range(n - 1):
    a, b = b, a + b
print(b)
`,
    tests: [
      ['1\n', '1\n'],
      ['2\n', '2\n'],
      ['3\n', '3\n'],
      ['10\n', '89\n'],
      ['45\n', '1836311903\n'],
      ['90\n', '4660046610375530309\n'],
    ],
  },
  {
    id: 'coin-change',
    task: 'Coins come in n values, with an unlimited supply of each. What is the smallest number of coins whose values add up to the amount?',
    input: 'The first line holds n and the amount (1 <= n <= 50, 0 <= amount <= 10^4), the second the n coin values (1 to 10^4).',
    output: 'The smallest number of coins, or -1 when the amount cannot be made.',
    example: ['2 8\n3 5', '2'],
    golden: String.raw`
import sys
data = list(map(int, sys.stdin.read().split()))
n, amount = data[0], data[1]
coins = data[2:2 + n]
INF = float('inf')
best = [0] + [INF] * amount
for v in range(1, amount + 1):
    for c in coins:
        if c <= v and best[v - c] + 1 < best[v]:
            best[v] = best[v - c] + 1
print(best[amount] if best[amount] != INF else -1)
`,
    tests: [
      ['3 11\n1 2 5\n', '3\n'],
      ['1 3\n2\n', '-1\n'],
      ['1 0\n7\n', '0\n'],
      ['3 6\n1 3 4\n', '2\n'],
      ['2 7\n2 4\n', '-1\n'],
      ['4 100\n1 5 10 25\n', '4\n'],
    ],
  },
  {
    id: 'longest-increasing',
    task: 'Find the length of the longest strictly increasing subsequence of an array (its elements keep their order but need not be adjacent).',
    input: 'The first line holds n (1 <= n <= 2000), the second n integers with absolute value at most 10^9.',
    output: 'The length.',
    example: ['4\n1 3 2 4', '3'],
    golden: String.raw`
import sys
from bisect import bisect_left
data = sys.stdin.read().split()
n = int(data[0])
tails = []
for x in map(int, data[1:1 + n]):
    i = bisect_left(tails, x)
    if i == len(tails):
        tails.append(x)
    else:
        tails[i] = x
print(len(tails))
`,
    tests: [
      ['8\n10 9 2 5 3 7 101 18\n', '4\n'],
      ['5\n5 4 3 2 1\n', '1\n'],
      ['6\n1 2 2 3 3 4\n', '4\n'],
      ['1\n7\n', '1\n'],
      ['7\n3 10 2 1 20 4 6\n', '3\n'],
    ],
  },
  {
    id: 'edit-distance',
    task: 'What is the smallest number of single-letter insertions, deletions and replacements that turn the first word into the second?',
    input: 'Two lines, each a word of 1 to 500 lowercase letters.',
    output: 'The edit distance.',
    example: ['cat\ncut', '1'],
    golden: String.raw`
a = input().strip()
b = input().strip()
prev = list(range(len(b) + 1))
for i, ca in enumerate(a, 1):
    cur = [i]
    for j, cb in enumerate(b, 1):
        cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
    prev = cur
print(prev[-1])
`,
    tests: [
      ['kitten\nsitting\n', '3\n'],
      ['abc\nabc\n', '0\n'],
      ['horse\nros\n', '3\n'],
      ['a\nb\n', '1\n'],
      ['intention\nexecution\n', '5\n'],
      ['abc\nxyzabc\n', '3\n'],
    ],
  },
  {
    id: 'grid-paths',
    task: 'A grid has free cells (.) and walls (#). Count the paths from the top-left cell to the bottom-right cell that only move right or down and only use free cells.',
    input: 'The first line holds r and c (1 <= r, c <= 30), then r lines of c characters.',
    output: 'The exact number of paths (0 when the first or last cell is a wall).',
    example: ['2 3\n...\n...', '3'],
    golden: String.raw`
import sys
lines = sys.stdin.read().split()
r, c = int(lines[0]), int(lines[1])
grid = lines[2:2 + r]
ways = [[0] * c for _ in range(r)]
for i in range(r):
    for j in range(c):
        if grid[i][j] == '#':
            continue
        if i == 0 and j == 0:
            ways[i][j] = 1
        else:
            ways[i][j] = (ways[i - 1][j] if i > 0 else 0) + (ways[i][j - 1] if j > 0 else 0)
print(ways[r - 1][c - 1])
`,
    tests: [
      ['3 3\n...\n.#.\n...\n', '2\n'],
      ['2 2\n..\n..\n', '2\n'],
      ['1 1\n.\n', '1\n'],
      ['2 2\n#.\n..\n', '0\n'],
      ['3 4\n....\n....\n....\n', '10\n'],
      ['3 3\n.#.\n#..\n...\n', '0\n'],
    ],
  },
  {
    id: 'knapsack',
    task: 'Choose some of n items, each at most once, with total weight at most W and the largest total value.',
    input: 'The first line holds n and W (1 <= n <= 100, 0 <= W <= 10^4), then n lines with the weight (1 to 10^4) and the value (0 to 10^6) of an item.',
    output: 'The largest total value.',
    example: ['2 3\n1 2\n2 3', '5'],
    golden: String.raw`
import sys
data = list(map(int, sys.stdin.read().split()))
n, cap = data[0], data[1]
best = [0] * (cap + 1)
for k in range(n):
    w, v = data[2 + 2 * k], data[3 + 2 * k]
    for c in range(cap, w - 1, -1):
        if best[c - w] + v > best[c]:
            best[c] = best[c - w] + v
print(best[cap])
`,
    tests: [
      ['3 50\n10 60\n20 100\n30 120\n', '220\n'],
      ['1 5\n6 10\n', '0\n'],
      ['4 7\n1 1\n3 4\n4 5\n5 7\n', '9\n'],
      ['2 10\n5 10\n5 10\n', '20\n'],
      ['3 0\n1 5\n2 6\n3 7\n', '0\n'],
    ],
  },
  // ------------------------------------------------------------ parsing
  {
    id: 'evaluate-expression',
    task: 'Evaluate an arithmetic expression made of non-negative integers, the operators +, - and *, and parentheses, possibly with spaces. * binds tighter than + and -, and operators of the same level apply from left to right. There is no unary minus.',
    input: 'One line: the expression (1 to 1000 characters).',
    output: 'Its integer value.',
    example: ['8 - 2 * 3', '2'],
    golden: String.raw`
import re
tokens = re.findall(r'\d+|[-+*()]', input())
pos = 0
def peek():
    return tokens[pos] if pos < len(tokens) else None
def take():
    global pos
    pos += 1
    return tokens[pos - 1]
def expr():
    value = term()
    while peek() in ('+', '-'):
        op = take()
        rhs = term()
        value = value + rhs if op == '+' else value - rhs
    return value
def term():
    value = factor()
    while peek() == '*':
        take()
        value *= factor()
    return value
def factor():
    tok = take()
    if tok == '(':
        value = expr()
        take()
        return value
    return int(tok)
print(expr())
`,
    tests: [
      ['1 + 2 * 3\n', '7\n'],
      ['(1 + 2) * 3\n', '9\n'],
      ['10 - 4 - 3\n', '3\n'],
      ['2 * (3 + 4) * 5\n', '70\n'],
      ['42\n', '42\n'],
      ['100 - 2 * (3 - 10)\n', '114\n'],
    ],
  },
  {
    id: 'csv-column-sum',
    task: 'Sum one column of a small CSV table of integers.',
    input: 'The first line holds the name of the column. Then comes the table: a header line with the column names separated by commas, then 1 to 1000 rows of comma-separated integers (no spaces, no quotes).',
    output: 'The sum of the named column.',
    example: ['y\nx,y\n1,2\n3,4', '6'],
    golden: String.raw`
import sys
lines = [line.strip() for line in sys.stdin.read().split('\n') if line.strip()]
name = lines[0]
col = lines[1].split(',').index(name)
print(sum(int(row.split(',')[col]) for row in lines[2:]))
`,
    tests: [
      ['b\na,b,c\n1,2,3\n4,5,6\n', '7\n'],
      ['x\nx\n10\n-3\n5\n', '12\n'],
      ['total\nid,total\n1,100\n2,250\n3,-50\n', '300\n'],
      ['c\na,b,c\n0,0,0\n', '0\n'],
    ],
  },
  {
    id: 'minutes-between',
    task: 'Two times of day are given as HH:MM (24-hour clock). How many minutes pass from the first to the second? When the second is earlier than the first, it is on the next day.',
    input: 'One line with the two times separated by a space.',
    output: 'The number of minutes (0 to 1439).',
    example: ['10:00 11:15', '75'],
    golden: String.raw`
a, b = input().split()
def minutes(t):
    h, m = t.split(':')
    return int(h) * 60 + int(m)
print((minutes(b) - minutes(a)) % 1440)
`,
    tests: [
      ['09:00 17:30\n', '510\n'],
      ['23:50 00:10\n', '20\n'],
      ['12:00 12:00\n', '0\n'],
      ['00:00 23:59\n', '1439\n'],
      ['18:45 06:15\n', '690\n'],
    ],
  },
  {
    id: 'key-value-lookup',
    task: 'Read assignments of the form key=value, then answer lookups. A later assignment to a key replaces the earlier one. A key is everything before the first =, the value everything after it.',
    input: 'The first line holds n (0 <= n <= 10^4), then n assignment lines; then a line with q (1 <= q <= 10^4) and q lines with one key each. Keys and values contain no spaces.',
    output: 'For each lookup, the value of the key, or NOT FOUND.',
    example: ['1\nk=v\n1\nk', 'v'],
    golden: String.raw`
import sys
lines = sys.stdin.read().split('\n')
n = int(lines[0])
store = {}
for line in lines[1:1 + n]:
    key, value = line.strip().split('=', 1)
    store[key] = value
q = int(lines[1 + n])
for key in lines[2 + n:2 + n + q]:
    print(store.get(key.strip(), 'NOT FOUND'))
`,
    tests: [
      ['2\na=1\nb=2\n2\na\nc\n', '1\nNOT FOUND\n'],
      ['3\nx=hello\ny=world\nx=bye\n2\nx\ny\n', 'bye\nworld\n'],
      ['1\nkey=value=with=equals\n1\nkey\n', 'value=with=equals\n'],
      ['0\n1\nanything\n', 'NOT FOUND\n'],
    ],
  },
  {
    id: 'day-of-year',
    task: 'Which day of its year is a date of the Gregorian calendar? A year is a leap year when it is divisible by 4, except years divisible by 100 that are not divisible by 400.',
    input: 'One line with a date as YYYY-MM-DD (year 1 to 9999).',
    output: 'The day of the year (1 for January 1st).',
    example: ['2023-02-01', '32'],
    golden: String.raw`
y, m, d = map(int, input().strip().split('-'))
leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
print(sum(days[:m - 1]) + d)
`,
    tests: [
      ['2024-01-01\n', '1\n'],
      ['2023-12-31\n', '365\n'],
      ['2024-12-31\n', '366\n'],
      ['2000-03-01\n', '61\n'],
      ['1900-03-01\n', '60\n'],
      ['2021-07-04\n', '185\n'],
    ],
  },
  {
    id: 'transpose',
    task: 'Transpose a matrix: row i of the result is column i of the input.',
    input: 'The first line holds r and c (1 <= r, c <= 100), then r lines of c integers.',
    output: 'c lines of r integers separated by spaces.',
    example: ['1 2\n5 6', '5\n6'],
    golden: String.raw`
import sys
data = sys.stdin.read().split()
r, c = int(data[0]), int(data[1])
m = [data[2 + i * c:2 + (i + 1) * c] for i in range(r)]
for j in range(c):
    print(' '.join(m[i][j] for i in range(r)))
`,
    tests: [
      ['2 3\n1 2 3\n4 5 6\n', '1 4\n2 5\n3 6\n'],
      ['1 1\n9\n', '9\n'],
      ['3 1\n1\n2\n3\n', '1 2 3\n'],
      ['2 2\n1 2\n3 4\n', '1 3\n2 4\n'],
    ],
  },
];

/** The built-in problems (ids unique). */
export const CODE_PROBLEMS: readonly CodeProblem[] = Object.freeze(SPECS.map(problem));
