a, b, m = map(int, input().split())
print(pow(a, b, m))
