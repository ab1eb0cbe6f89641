#ifndef PS_OPENSSL_H
#define PS_OPENSSL_H
/* Typed wrappers for OpenSSL macros (stack, BIO and free helpers) that Swift cannot call. No logic. */
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/ocsp.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>

/* OPENSSL_free is a macro that passes the call site to CRYPTO_free. */
void ps_openssl_free(void *pointer);

/* STACK_OF(X509) macros. */
STACK_OF(X509) *ps_sk_X509_new_null(void);
int ps_sk_X509_push(STACK_OF(X509) *stack, X509 *certificate);
int ps_sk_X509_num(const STACK_OF(X509) *stack);
X509 *ps_sk_X509_value(const STACK_OF(X509) *stack, int index);
void ps_sk_X509_free(STACK_OF(X509) *stack);

/* The certificates a PKCS#7 SignedData carries (p7->d.sign->cert), NULL for another type; owned by p7. */
STACK_OF(X509) *ps_PKCS7_certificates(PKCS7 *p7);

/* BIO_get_mem_data is a BIO_ctrl macro. */
long ps_BIO_get_mem_data(BIO *bio, char **data);
#endif
