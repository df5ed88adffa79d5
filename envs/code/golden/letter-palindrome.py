import sys
line = sys.stdin.readline()
letters = [c.lower() for c in line if c.isascii() and c.isalpha()]
print('YES' if letters == letters[::-1] else 'NO')
