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
