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
