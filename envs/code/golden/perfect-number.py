n = int(input())
s = 0
d = 1
while d * d <= n:
    if n % d == 0:
        s += d
        if d != n // d:
            s += n // d
    d += 1
s -= n
print('PERFECT' if s == n else 'ABUNDANT' if s > n else 'DEFICIENT')
