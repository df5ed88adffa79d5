y, m, d = map(int, input().strip().split('-'))
leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
print(sum(days[:m - 1]) + d)
