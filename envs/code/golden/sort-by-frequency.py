import sys
from collections import Counter
data = sys.stdin.read().split()
n = int(data[0])
a = list(map(int, data[1:1 + n]))
counts = Counter(a)
print(' '.join(map(str, sorted(a, key=lambda x: (-counts[x], x)))))
