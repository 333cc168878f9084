/**
 * Fixed vectors for the hybrid `/v2/login` (PROTOCOL.md 3.4), computed once with node:crypto
 * (publicEncrypt with RSA-OAEP-SHA-256, createCipheriv('aes-256-cbc')), independently of the library.
 * One checked-in 2048-bit test key (never used outside tests) plays the server key for opening and the
 * client key for sealing.
 */
export const KEY = {
  publicKey: `-----BEGIN PUBLIC KEY-----
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAyYxk2/5xGobTFtbGswon
rgLrbx0RZDkrdmRzGgV0SAVENQ/kssRpdqKmr8oP1N50h0d99NLxsa7zy165kqco
6h7s3vK/OnM0RjTvdQcn7DNsTZvFHTvaZ8ftHntIIOdNH44zkAAFLoexJHVt9jjK
2T6uy6bxTtDgX56KFwveAe+MVVwyFReF6mBVudICof/WBo8NSHobaatYhSc+3jFj
Q3ealxZWb9hyVepLUGmpePfIpBurqbDQfoy+0lGvS0+oOck/XNf3bkJjrRsAbrhJ
6TG9QYBrtOpxK9AqGtDFXeApDQDhUSCqKOrha0XTzfy+8EFa9fs0ZfIgIC6seQQ3
LwIDAQAB
-----END PUBLIC KEY-----
`,
  privateKey: `-----BEGIN PRIVATE KEY-----
MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQDJjGTb/nEahtMW
1sazCieuAutvHRFkOSt2ZHMaBXRIBUQ1D+SyxGl2oqavyg/U3nSHR3300vGxrvPL
XrmSpyjqHuze8r86czRGNO91ByfsM2xNm8UdO9pnx+0ee0gg500fjjOQAAUuh7Ek
dW32OMrZPq7LpvFO0OBfnooXC94B74xVXDIVF4XqYFW50gKh/9YGjw1Iehtpq1iF
Jz7eMWNDd5qXFlZv2HJV6ktQaal498ikG6upsNB+jL7SUa9LT6g5yT9c1/duQmOt
GwBuuEnpMb1BgGu06nEr0Coa0MVd4CkNAOFRIKoo6uFrRdPN/L7wQVr1+zRl8iAg
Lqx5BDcvAgMBAAECggEAGs7Gt5A/YQTf3ODSawwFvRp8UDowjwEfq86ulJ53GgFB
UkF77N89G9+Ehks9EdZI75ltwnuwVC7uFHXT/xKm2YUlgn4NO2wJXvE5jHpYMA2i
8Suv6zSD11v7SRuiu2Wol3Llntix17+Kq0vHRYHGUWEKBOJ+pDoaLf27ZldYvy7u
J+cy6NQa7Fx4TvGmBM5axuRIeedovdIhTam8scGwsZBjnVH/EK8G6TZZcRUVAzju
8ZvRe8likIo88wvt17OPdxWlTVopvYUpUQgedpuRsN9vFXMOsVRkZHtIpAdpM5+o
JjgySrN3lRn099tQ+vJ8fOB5jb5mFaWjUwLlYyaywQKBgQDrPIYHJ5BkgMahUNrW
O4LJIbKlcnMjjzgzCVQJedrT0c0Vrv9eDkoUVQRPtyN43n2wBMqlUUQ8N6posLQW
QD/hCorqiW9R3rc6Ds0RgTuPsL4QW22NVui2TsNLCP2DRpBkuUXCilEBMVDqZrPu
13grsbHNxW/kVBolKRlpBm0LTwKBgQDbVqVGj+6SUYHWnIltOzf1vq5RCoLSsjgz
jpcF8sLbHhyqvbGjwI7+7r3JzrVYNjdtGQ2udXkM3RtTPrGDNE/Lkh84Ka2SClVs
kk89hjMI2tLFGe7rCvOrviKopEgMK6rueUDCLsBSWDS7UYFk+EutQPDOLKPAfRp4
WNejTZWeIQKBgQCwzhrGwdvrTkb89HKm1q/kUKmfZLhZn8nTwk0hmi75ShVlGNTj
csYHJidJaxMEQ+YgKFnPi5dH02cHrNiOaNgaYvwqcAX1ePoqbvl/EK0dwO/6B139
/7aFYAm1GhrBUoYwzng6Ug+0X8a7h1nySI0P+kzzplQFP5kvGQb6Q1QuTQKBgBlA
Y2y5O1UbDyCfCu9JZwritfzcge0x2WiOHPLxXN+PGuvJRP8+NvhAkhb+tj/+lej4
fmu8WIBToEa4LAWX6yvbmb6EhdgPWoBSY88IeS2my6cncisbKqx2ClVx/F1yVY54
5Sy15yxTvVZnbscqEsRSeqax2vRZMsfyKnlBgF0hAoGBALcWDWdJFZFnAfCTY//Z
lqxgyffjiW5MenUqSxVrC2QS/P+XX8Dk74KoB8njkzZmLsqB7ZsUdl5EAwCMLS1K
Lpwb3Okmk0Y4uIdbJRBI0zsogbCr6rC4XJVjupjfSHeAVhI5v9HerSVQaB0461QP
Ns9rPm8/Geobd4QC/db4dqTl
-----END PRIVATE KEY-----
`,
};

/** Opening: K = bytes 0xa0..0xbf, IV = bytes 0xf0..0xff; `aesKey` is one (randomized) OAEP encryption of K. */
export const OPEN = {
  aesKey: "nQSqyIAIo/kZZZhM8F9AawIwmBbMctTAez9AgRSt4ypePgeYPPQa+e2rrYiw2Sv6JW7hBvJaQvJ3IzyGi8FnqT7CYHoXmoGDyVaLFgflvSpY+DZvUtn3LLp6+iCeJvw5h+HsGVbiAr3+cXcgHweN7DQpgnLLOHXaqNFLr5qWWeASaKu57pExWOTLrFF6Ej9/srcfWqiYkxKEP4WJvxN0zYpMKFQiVseh3LvFdQMmySGNu5naMlDYRdEQ8VeMo/Vr2/RI5b1sbugUtBvzTd3eDZSpVG6cX0f5HdfrV1d/gwgNctkHXjpSqe4cW/PzLMro8pj0++LxbJGenGdTLnYWHg==",
  data: "8PHy8/T19vf4+fr7/P3+/+JkoxCwoozIB5f/UgBehb2/k68nZ3wxCBmCGhCn7vUCaMXNbXeFZsjXoXoJjX13HcGrrrCWYaB+ZvrFXWZFEI7zSAnw3BBfc+ptq0LOPp+EMf2Gke8xlpX5Agy5EznFP+fmsPTAresbOFbwSQ3FIOVV/0aSBoAvyjPz+lCh2RMW",
  login: `{"user":"alice","pass":"3092480224001c66a3170bdd19af3b61","2faToken":"","appNames":["crm"],"furtherencryption":false}`,
};

/** Sealing: K2 = bytes 0..31, IV2 = bytes 0x10..0x1f; `B` is the part after the `|` (A is randomized by OAEP). */
export const SEAL = {
  key: Uint8Array.from({ length: 32 }, (_, i) => i),
  iv: Uint8Array.from({ length: 16 }, (_, i) => 0x10 + i),
  answer: `{"status":{"internalStatus":"0","statusMessage":"ok"},"data":{"sessionId":"0123456789abcdef0123456789abcdef","user":{"Name":"alice"},"databaseName":"demo","note":"Grüße"}}`,
  B: "EBESExQVFhcYGRobHB0eHw7YTI5rdIhi2uOywr5OZuSNoJiTJ54deJI8lDJgSzcSSsCDjwPcy1wkXn4tS9zqA829buGkaMewIoB7NevEUB2uTebx5AIXA9c8/7U9yimMK7GZcRoRoW9B1YeaUP5c6dpn3DFw22yeDAH0B5/Eew9WoV9CM+15y2YAaKedQ6USYoKEw3nCTMWMrXoGJiWve/seaDEXNjR6gBopPmChtMTI2RieMGp/C8IB5hrOeWrH",
};

/** An 8192-bit public key (too large for a client key); checked in because generating one takes seconds. */
export const PUBLIC_KEY_8192 = `-----BEGIN PUBLIC KEY-----
MIIEIjANBgkqhkiG9w0BAQEFAAOCBA8AMIIECgKCBAEAtqaKCkn/WOaXgopNBXwM
WnuP5vfnyk4QpzC+pLtECdAZSExTUl303lalhbSZtWoCfiLAazDCa1uo+U7ljSlC
5rSZLINj7CMDfjRbPlAisknWCe7/FOVn77TqTFFgKhURedmVaxdEbLWtZYyczjnW
eZSBUDDgExc6egIKJi2ik3qHKpCkxzE4D3RDmDTePqAI1lg7B3BfU5c6vDbZ3X83
zj0/b7tqeLmzG9fhaAXOQ2yCcWP1FFs65EvUDf2EzgsQs+N2JC3RDHr9bzEoiUa4
DCBrhykS/kr2a/38jvE8dCGJ3QlZspBft8bwvUG+aEtByV3yoGkP9jmkAgn+R/bL
EXikEt/VfWhy3KgbUvAH+haL7EfqMYkLoksqBAqkfSJP2oBG/vauxmpUIGteV8DF
8KZhifIHObsbGXJUuC6IKG+IvTN7YnMzkiIc+r93HBjVqtMQBg+QbK9d5TRSmPqD
z8O9RduJObQ9dxT6wFuuU92zfHSm7qUKwtjYIB8r+HyDp2rLR5zr2wp+iJnIuluD
cyDgh0naeErvYpgdTdpQYGkbRbtEcOWP3tHptlwtaetxnHeJH5hneOdxW+vLR7t0
bPHlVCMJyU/tiz8DECqjgxe2E4WUzEwUp9z0cdjgx+jBhPAOrbNgdclAAn54H57h
WYEpWkwiEhHkxN8idskWBRZjrYSqc/luBRi66fnzxZcmHC1C6Q1FMAO95Y78Z+A5
VTMsK8b2yIhB0tCy+h1YrtHs2D0sU0BbtKzIK29V7g70TSlg8CBJDAdLqBROjUlb
YVVgIeDDWeLM36d6BUZoy+XEQudDcgqg/dP7GZijRvL0p2OcZSsl56FKX9qfw50G
2LFNwyQFKDSCl6+Qzaz2Q2mFopvaUVM2mgJLOZEGQGp+P69VvyU9YUIrgFAzc/Lk
T4Om9ccZsbR39NGmLjUa7y0HxLkJx+xq/sw9YFefAwH7R1xo6WKE0NYSMxbF1RlD
auyKeEOrCXLk+93BM055d3/8F0kpDCu1D6b9nwlcgiUuUcH8Xjd7udtEbvy77r81
ThkCruIbPLoZoiZkafh2ocCTGGO/fQL4kMKAkGHPLtDdz+6EuMSPi7EQSvTAXkyA
zjYA8EZaXIPlYuNAj/S2X+iBxnTvSuq3HtEfoSPhbpjChzn+KAawSv1pCIiVg4yu
M7CmSHjqxtH2nYRYlY5jF2gvKt++xeAVUmdgOQKTkyyN4diLb4AP4lhwHrqMKpXF
G8g/0xK1cgmLXFsBIDlvpubkTlOUkX9v4iKrkuxQ9nad+y3FNW4qMix3lLkb3/b3
xHj+uiaaDoU99BScBkXlGiGKXklb1GDFpF1813u902+sH6v4IXSYYci5rDHavifM
HwIDAQAB
-----END PUBLIC KEY-----
`;
