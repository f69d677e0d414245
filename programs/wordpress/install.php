<?php
// SPDX-License-Identifier: MIT
// Installs the site into the (empty) database, as wp-admin/install.php's
// last step does: run by krunner's wordpress suite with php CLI from the
// WordPress copy's directory, before anything is timed.
// Usage: php install.php   (in the WordPress directory, wp-config.php written)
define('WP_INSTALLING', true);
$_SERVER['HTTP_HOST'] = '127.0.0.1';
$_SERVER['REQUEST_URI'] = '/';
// No mail: the new-site notification is pluggable; this one does nothing.
function wp_new_blog_notification($blog_title, $blog_url, $user_id, $password)
{
}
require getcwd() . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
if (is_blog_installed()) {
    fwrite(STDERR, "install.php: the site is already installed\n");
    exit(1);
}
$result = wp_install('kprof benchmark', 'admin', 'admin@example.invalid', false, '',
                     'kprof-benchmark-password');
if (empty($result['user_id'])) {
    fwrite(STDERR, "install.php: wp_install() failed\n");
    exit(1);
}
echo "installed wordpress " . get_bloginfo('version') . "\n";
