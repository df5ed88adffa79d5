import sys
lines = [line.strip() for line in sys.stdin.read().split('\n') if line.strip()]
name = lines[0]
col = lines[1].split(',').index(name)
print(sum(int(row.split(',')[col]) for row in lines[2:]))
