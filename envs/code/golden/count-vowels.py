import sys
print(sum(1 for c in sys.stdin.readline() if c in 'aeiouAEIOU'))
