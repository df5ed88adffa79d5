s = input().strip()
print(''.join('_' + c.lower() if c.isupper() else c for c in s))
