<?php
// SPDX-License-Identifier: MIT
// Router for `php -S` in krunner's scratch copy of WordPress: what the
// rewrite rules of WordPress's .htaccess do under Apache. A file that
// exists is served as it is (a .php file runs); every other path goes to
// WordPress's front controller, index.php.
$path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
if ($path !== '/' && $path !== null && is_file(__DIR__ . $path)) {
    return false;
}
$_SERVER['SCRIPT_NAME'] = '/index.php';
$_SERVER['SCRIPT_FILENAME'] = __DIR__ . '/index.php';
require __DIR__ . '/index.php';
