# SPDX-License-Identifier: MIT
# python3 -m http.server (ThreadingHTTPServer: a thread per connection) on
# 127.0.0.1, an ephemeral port, fetched by curl: files from 0 bytes to
# 5 MB, a directory listing, a 404 and a 501, HEAD, 24 transfers in
# parallel in one curl (one event loop) and 8 curl processes at once. Only
# loopback; every curl has a time limit; the server is ended by SIGTERM.
# torture: quick timeout=180
. "$TORTURE_CASES/lib.sh"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy
mkdir -p www/sub
: > www/empty
printf x > www/one
seq 1 12000 > www/small
seq 1 700000 > www/big
for i in $(seq 1 24); do seq "$i" 3000 > "www/sub/p$i.txt"; done
"$PY" -u -m http.server --bind 127.0.0.1 --directory www 0 > server.out 2> server.log &
server=$!
port=
for _ in $(seq 1 100); do
	port=$(sed -n 's/^Serving HTTP on 127.0.0.1 port \([0-9]*\) .*/\1/p' server.out)
	[ -n "$port" ] && break
	sleep 0.1
done
[ -n "$port" ] || { echo "server did not start"; kill $server; exit 1; }
url=http://127.0.0.1:$port
c() { curl --noproxy '*' -sS --max-time 30 "$@"; }
for f in empty one small big; do
	c -o "got.$f" -w "$f %{http_code} %{size_download}\n" "$url/$f"
	cmp "got.$f" "www/$f" && echo "$f same bytes"
done
c -w '%{http_code}\n' "$url/sub/" | grep -c 'href="p'
c -o /dev/null -w 'missing %{http_code}\n' "$url/missing"
c -o /dev/null -w 'post %{http_code}\n' -d 'a=b' "$url/one"
c -I "$url/small" | tr -d '\r' | grep -E '^(HTTP|Content-Length|Content-type)' | sort
urls=()
for i in $(seq 1 24); do urls+=(-o "par.$i" "$url/sub/p$i.txt"); done
c -Z --parallel-max 8 "${urls[@]}"
echo "parallel: exit $?"
for i in $(seq 1 24); do cmp -s "par.$i" "www/sub/p$i.txt" || echo "par.$i differs"; done
for i in $(seq 1 8); do c -o "proc.$i" "$url/big" & done
wait $(jobs -p | grep -v "^$server$")
for i in $(seq 1 8); do cmp -s "proc.$i" www/big || echo "proc.$i differs"; done
echo "8 processes fetched"
kill -TERM $server
wait $server
echo "server: exit $?"
