import sys
lines = sys.stdin.read().split('\n')
n = int(lines[0])
store = {}
for line in lines[1:1 + n]:
    key, value = line.strip().split('=', 1)
    store[key] = value
q = int(lines[1 + n])
for key in lines[2 + n:2 + n + q]:
    print(store.get(key.strip(), 'NOT FOUND'))
