module ccd

go 1.19
