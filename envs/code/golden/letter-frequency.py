from collections import Counter
counts = Counter(c for c in input() if c != ' ')
for ch in sorted(counts):
    print(ch, counts[ch])
