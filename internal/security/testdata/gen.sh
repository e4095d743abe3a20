#!/usr/bin/env bash
# Regenerates the fixtures of internal/security's tests: stores and keys
# written by the real tools (OpenSSL, Java's keytool), so that the tests
# check we read what they write, not only what our own test helpers write.
# Every certificate is valid for 100 years. Password: fixture-pass
# (JKS key entry of keytool-keypass.jks: key-pass).
# Run from this directory: ./gen.sh
set -euo pipefail
pw=fixture-pass
rm -f ./*.pem ./*.jks ./*.p12

# A self-signed certificate for localhost/127.0.0.1 with its EC key, the
# key also PKCS#8-encrypted in the ways openssl pkcs8 -topk8 can.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -keyout key.pem -out cert.pem -days 36500 -subj "/CN=localhost/O=Fixture" \
  -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
openssl pkcs8 -topk8 -in key.pem -out key-aes256.pem -v2 aes-256-cbc -passout pass:$pw
openssl pkcs8 -topk8 -in key.pem -out key-aes128-sha1.pem -v2 aes-128-cbc -v2prf hmacWithSHA1 -passout pass:$pw
openssl pkcs8 -topk8 -in key.pem -out key-des3.pem -v2 des3 -passout pass:$pw
openssl pkcs8 -topk8 -in key.pem -out key-pbes1.pem -v1 PBE-SHA1-3DES -passout pass:$pw
openssl ec -in key.pem -out key-sec1.pem 2>/dev/null  # "EC PRIVATE KEY", not PKCS#8
# A DSA key (PKCS#8), as old keytool defaults made: Java takes it, Go cannot.
openssl dsaparam -genkey 1024 2>/dev/null | openssl pkcs8 -topk8 -nocrypt -out key-dsa.pem

# keytool keystores (a self-signed key entry) and truststores.
ktgen() { keytool -genkeypair -alias broker -keyalg EC -groupname secp256r1 \
  -dname "CN=localhost, O=Keytool" -ext SAN=dns:localhost,ip:127.0.0.1 \
  -validity 36500 -storepass $pw "$@" 2>/dev/null; }
ktgen -storetype JKS -keystore keytool.jks -keypass $pw
ktgen -storetype JKS -keystore keytool-keypass.jks -keypass key-pass
ktgen -storetype PKCS12 -keystore keytool.p12
keytool -exportcert -rfc -alias broker -keystore keytool.jks -storepass $pw > keytool-cert.pem 2>/dev/null
keytool -exportcert -rfc -alias broker -keystore keytool.p12 -storepass $pw > keytool-p12-cert.pem 2>/dev/null
for t in JKS PKCS12; do
  ext=jks; [ $t = PKCS12 ] && ext=p12
  keytool -importcert -noprompt -alias fixture -file cert.pem -storetype $t \
    -keystore truststore.$ext -storepass $pw 2>/dev/null
done
# A PKCS12 file of certificates without Java's trusted attribute: Java
# reads no entry from it.
openssl pkcs12 -export -nokeys -in cert.pem -out untrusted.p12 -passout pass:$pw
