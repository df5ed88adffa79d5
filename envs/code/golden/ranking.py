import sys
lines = sys.stdin.read().split('\n')
n = int(lines[0])
players = []
for line in lines[1:1 + n]:
    name, score = line.split()
    players.append((-int(score), name))
for _, name in sorted(players):
    print(name)
