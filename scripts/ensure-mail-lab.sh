#!/usr/bin/env bash
# The mail lab (npm run mail-lab) runs Debian's Postfix, Dovecot and Rspamd as plain processes with
# their own config (in its runtime directory under /var/tmp); this only installs the packages. Its
# OAuth provider is an npm package (oidc-provider) and Dovecot's oauth2 passdb is in dovecot-core. Postfix is preseeded "No configuration" so
# the package neither prompts nor writes /etc/postfix/main.cf, and no system service is started here.
set -euo pipefail
need=()
command -v /usr/sbin/postfix >/dev/null 2>&1 || need+=(postfix)
command -v /usr/sbin/dovecot >/dev/null 2>&1 || need+=(dovecot-core)
[ -x /usr/lib/dovecot/imap ] || need+=(dovecot-imapd)
[ -x /usr/lib/dovecot/lmtp ] || need+=(dovecot-lmtpd)
[ -e /usr/lib/dovecot/modules/lib90_sieve_plugin.so ] || need+=(dovecot-sieve)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
[ -x /usr/bin/rspamd ] || need+=(rspamd)
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
echo "postfix postfix/main_mailer_type select No configuration" | $SUDO debconf-set-selections
echo "postfix postfix/mailname string lab.salvo.test" | $SUDO debconf-set-selections
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
