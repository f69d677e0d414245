module kgocgo

go 1.19
