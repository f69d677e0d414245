module kspawn

go 1.19
