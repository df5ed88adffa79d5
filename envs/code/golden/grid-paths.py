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
