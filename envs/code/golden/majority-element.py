import sys
from collections import Counter
data = sys.stdin.read().split()
n = int(data[0])
value, count = Counter(map(int, data[1:1 + n])).most_common(1)[0]
print(value if 2 * count > n else 'NONE')
