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
