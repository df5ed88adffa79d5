a, b = input().split()
print('YES' if sorted(a.lower()) == sorted(b.lower()) else 'NO')
