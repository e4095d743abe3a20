#!/usr/bin/env bash
# Makes test certificates for a TLS listener with OpenSSL (Debian's openssl
# package, 3.x):
#
#   ca.pem, ca-key.pem                   a test certificate authority
#   broker.pem, broker-key.pem           the broker, for localhost and 127.0.0.1
#   broker-keystore.pem, broker.p12      the same as a PEM keystore and PKCS12
#   alice.pem, alice-key.pem             a client certificate, CN=alice
#   alice-keystore.pem, alice.p12        the same as a PEM keystore and PKCS12
#
# Keys are RSA 2048, unencrypted PKCS#8 ("PRIVATE KEY", what Kafka's PEM
# keystores read). The PKCS12 files are protected by $PASSWORD (default
# changeit). Certificates are for tests only: the CA key sits next to them.
#
# Usage: config/secure/gen-certs.sh [dir]   (default ./config/secure/certs)
# An existing CA is kept unless FORCE=1: re-running then only re-issues
# the broker and client certificates.
set -euo pipefail

dir=${1:-./config/secure/certs}
password=${PASSWORD:-changeit}
ca_days=3650
days=825

command -v openssl >/dev/null || { echo "gen-certs: openssl not found (apt-get install openssl)" >&2; exit 1; }
mkdir -p "$dir"
cd "$dir"
umask 077
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

serial() { echo "0x$(openssl rand -hex 16)"; }

if [[ -f ca.pem && -f ca-key.pem && ${FORCE:-0} != 1 ]]; then
  echo "gen-certs: keeping the CA in $dir (FORCE=1 makes a new one)"
else
  openssl genpkey -quiet -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out ca-key.pem
  openssl req -x509 -new -key ca-key.pem -out ca.pem -days "$ca_days" -sha256 \
    -set_serial "$(serial)" -subj "/O=Silkworm/CN=Silkworm Test CA" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -addext "subjectKeyIdentifier=hash"
fi

# issue NAME SUBJECT EXTENDED_KEY_USAGE [SUBJECT_ALT_NAME]
issue() {
  local name=$1 subj=$2 eku=$3 san=${4:-}
  openssl genpkey -quiet -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$name-key.pem"
  openssl req -new -key "$name-key.pem" -subj "$subj" -out "$tmp/$name.csr"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    echo "authorityKeyIdentifier=keyid"
    [[ -n $san ]] && echo "subjectAltName=$san"
  } > "$tmp/$name.ext"
  openssl x509 -req -in "$tmp/$name.csr" -CA ca.pem -CAkey ca-key.pem -set_serial "$(serial)" \
    -days "$days" -sha256 -extfile "$tmp/$name.ext" -out "$name.pem" 2>/dev/null
  cat "$name-key.pem" "$name.pem" ca.pem > "$name-keystore.pem"
  openssl pkcs12 -export -name "$name" -inkey "$name-key.pem" -in "$name.pem" -certfile ca.pem \
    -out "$name.p12" -passout "pass:$password"
  local purpose=sslclient
  [[ $eku == serverAuth* ]] && purpose=sslserver
  openssl verify -CAfile ca.pem -purpose "$purpose" "$name.pem" >/dev/null
}

issue broker "/O=Silkworm/CN=localhost" serverAuth,clientAuth "DNS:localhost,IP:127.0.0.1"
issue alice "/O=Silkworm/CN=alice" clientAuth

chmod 644 ca.pem broker.pem alice.pem
abs=$(pwd)
cat <<INFO
Certificates written to $abs.

Broker (server.properties):
  listeners=PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9093
  ssl.keystore.type=PEM
  ssl.keystore.location=$abs/broker-keystore.pem
  ssl.truststore.type=PEM
  ssl.truststore.location=$abs/ca.pem
  ssl.client.auth=required        # or requested / none
  # principal of alice: User:CN=alice,O=Silkworm (ssl.principal.mapping.rules=DEFAULT)

Kafka tools (--command-config):
  security.protocol=SSL
  ssl.truststore.type=PEM
  ssl.truststore.location=$abs/ca.pem
  ssl.keystore.type=PKCS12
  ssl.keystore.location=$abs/alice.p12
  ssl.keystore.password=$password

kcat / librdkafka:
  kcat -b 127.0.0.1:9093 -X security.protocol=ssl -X ssl.ca.location=$abs/ca.pem \\
    -X ssl.certificate.location=$abs/alice.pem -X ssl.key.location=$abs/alice-key.pem -L
INFO
