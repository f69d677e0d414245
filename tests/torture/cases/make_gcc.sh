# SPDX-License-Identifier: MIT
# make -j2 building 10 C files with gcc (gcc, cc1, as, collect2, ld: the
# whole driver tree), running the program, an incremental rebuild after a
# header changes, and `make -q`. The objects and the program are the same
# bytes on every run (no -g, relative paths), so their checksums are
# compared too.
# torture: quick timeout=300
. "$TORTURE_CASES/lib.sh"
mkdir src
cat > src/common.h <<'EOF'
#define SCALE 3
int part(int i);
EOF
for i in 0 1 2 3 4 5 6 7 8; do
	cat > src/part$i.c <<EOF
#include <stdio.h>
#include <string.h>
#include "common.h"
static const char name$i[] = "part$i";
int part$i(int x) { return x * SCALE + (int)strlen(name$i) + $i; }
EOF
done
{
	echo '#include <stdio.h>'
	echo '#include "common.h"'
	for i in 0 1 2 3 4 5 6 7 8; do echo "int part$i(int x);"; done
	echo 'int main(void) {'
	echo '	long sum = 0;'
	for i in 0 1 2 3 4 5 6 7 8; do echo "	sum += part$i($i); printf(\"part$i %d\\n\", part$i($i));"; done
	echo '	printf("sum %ld\n", sum);'
	echo '	return (int)(sum % 7);'
	echo '}'
} > src/main.c
cat > Makefile <<'EOF'
SRC := $(wildcard src/*.c)
OBJ := $(SRC:src/%.c=obj/%.o)
prog: $(OBJ)
	gcc -o $@ $(OBJ)
obj/%.o: src/%.c src/common.h
	@mkdir -p obj
	gcc -O2 -Wall -c $< -o $@
clean:
	rm -rf obj prog
EOF
# make's own, not a sub-make of the `make test` that may run this (its
# MAKELEVEL and MAKEFLAGS would add "Entering directory" lines with paths)
unset MAKELEVEL MAKEFLAGS MFLAGS MAKEOVERRIDES
# make's lines come in the order the jobs end: sorted
make -j2 > make.log 2>&1
echo "make: exit $?"
sort make.log
status "prog" ./prog
md5sum obj/*.o prog
sed -i 's/SCALE 3/SCALE 4/' src/common.h
make -j2 > make2.log 2>&1
echo "rebuild: exit $? $(grep -c -- '-c src/' make2.log) objects"
status "prog" ./prog
status "make -q" make -q
status "make clean" make -s clean
ls
