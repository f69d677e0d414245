module kgo

go 1.19
