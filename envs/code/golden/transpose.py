import sys
data = sys.stdin.read().split()
r, c = int(data[0]), int(data[1])
m = [data[2 + i * c:2 + (i + 1) * c] for i in range(r)]
for j in range(c):
    print(' '.join(m[i][j] for i in range(r)))
