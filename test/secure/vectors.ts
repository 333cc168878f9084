/**
 * Fixed vectors for the secure transport's message layer (PROTOCOL.md 4), shared by
 * test/secure/vectors.test.ts (checks the library against them) and test/readme.test.ts (checks the
 * README's table against them). They were computed once with node:crypto (createCipheriv('aes-256-ctr'),
 * createHmac('sha256')), independently of the library, for K = bytes 0..31.
 */
export const K = Uint8Array.from({ length: 32 }, (_, i) => i);
export const M_HEX = 'ae184d3a69adcb577d8e738fee8b5640c9a4ef38ba9a434e74b421fb0b57f92d';
export const REQUEST_PLAIN = '{"Name":"Alice","note":"Grüße, 40+ bytes so the counter runs over three blocks"}';
export const REQUEST_BODY = 'THa1YNCcB+itzPomrQwSYSboLRto0uWKp+VSF3iJS4zCQf1O2CD+Ilp9y9Bsrfet0EDsgAgpCBlN+Euors/iIR1t60ORo1I6GeSZfflLte3sgw==';
export const REQUEST_SIGNATURE = 'MxOXj77uJlaUNlBgR9aIbni8l5kZic+r9iQEV4vSfpY='; // REQ 7 POST /v1/execute/echo?x=1
export const GET_SIGNATURE = 'X4wC+7xsKwDr/jF73ej7PFhftnyM9S+ViRYQpSu3plE='; // REQ 8 GET /v1/object/USR00001, no body
export const RESPONSE_PLAIN = '{"status":{"internalStatus":"0","statusMessage":"ok"},"data":{}}';
export const RESPONSE_BODY = '9oa2laagVpjPMkE1nGr69cvl4saZBChL4Y0mCZxqpT0rB+UipY597AHyoavyLaIokSWfOmGtzyyTaCc37QSObw==';
export const RESPONSE_SIGNATURE = 'rWdzQ2mH6R1Tk784MnPMpsiKeOs4sEFCBxPI0FS8tps='; // RES 7 200

/** `n`, then the request's and the answer's initial counter block (hex). */
export const COUNTER_BLOCKS: Array<[number, string, string]> = [
  [1, '00000000000000010000000000000000', '80000000000000010000000000000000'],
  [2, '00000000000000020000000000000000', '80000000000000020000000000000000'],
  [4294967297, '00000001000000010000000000000000', '80000001000000010000000000000000'],
  [2 ** 53 - 1, '001fffffffffffff0000000000000000', '801fffffffffffff0000000000000000'],
];
