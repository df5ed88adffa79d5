import sys
data = sys.stdin.read().split()
n = int(data[0])
values = sorted(set(map(int, data[1:1 + n])))
print(values[-2] if len(values) > 1 else 'NONE')
