/**
 * Real answers of the demo (`npm start`, examples/demo-data.json), as the guides print them: the
 * examples of the shared answer schemas (openapi/schemas.ts), which the API reference page shows.
 */

/** `GET /v1/object/CUS00003` as alice. */
export const CUSTOMER = {"~ClassName": "Customer", "~ObjectID": "CUS00003", "~StoreTime": "20261121T055408+00:00", "Name": "David Bauer", "Number": 3, "City": "Cologne", "Active": true, "Revenue": 4119, "AccountManager": {"~ClassName": "Employee", "~ObjectID": "EMP00001", "~StoreTime": "20261121T055408+00:00", "Name1": "Alice", "Name2": "Schmidt", "Name3": "Head of sales", "Bild": {"~ClassName": "Bild", "~ObjectID": "IMG00001", "~StoreTime": "20261121T055408+00:00"}, "Mitarbeiteransprechpartner": {"~ClassName": "ContactPerson", "~ObjectID": "CON00001", "~StoreTime": "20261121T055408+00:00", "Name": "carol", "Name1": "Carol", "Name2": "Meyer", "Name3": "Front office", "Bild": {"~ClassName": "Bild", "~ObjectID": "IMG00003", "~StoreTime": "20261125T225642+00:00"}}}};

/** `GET /v1/objects/Customer?perPage=2&reverseOrder=true&query={"City":"Berlin"}` as alice. */
export const CUSTOMERS = {"~Count": 2, "~UnfilteredCount": 50, "~Elements": [{"~ClassName": "Customer", "~ObjectID": "CUS00300", "~StoreTime": "20261121T055408+00:00", "Name": "Anna Bauer", "Number": 300, "City": "Berlin", "Active": true, "Revenue": 11900, "AccountManager": {"~ClassName": "Employee", "~ObjectID": "EMP00002", "~StoreTime": "20261121T055408+00:00", "Name1": "Bob", "Name2": "Weber", "Name3": "Support engineer", "Bild": {"~ClassName": "Bild", "~ObjectID": "IMG00002", "~StoreTime": "20261121T055408+00:00"}, "Mitarbeiteransprechpartner": {"~ClassName": "ContactPerson", "~ObjectID": "CON00002", "~StoreTime": "20261121T055408+00:00"}}}, {"~ClassName": "Customer", "~ObjectID": "CUS00294", "~StoreTime": "20261121T055408+00:00", "Name": "Eva Wolf", "Number": 294, "City": "Berlin", "Active": false, "Revenue": 3662, "AccountManager": {"~ClassName": "Employee", "~ObjectID": "EMP00002", "~StoreTime": "20261121T055408+00:00", "Name1": "Bob", "Name2": "Weber", "Name3": "Support engineer", "Bild": {"~ClassName": "Bild", "~ObjectID": "IMG00002", "~StoreTime": "20261121T055408+00:00"}, "Mitarbeiteransprechpartner": {"~ClassName": "ContactPerson", "~ObjectID": "CON00002", "~StoreTime": "20261121T055408+00:00"}}}]};

/** `POST /v1/login` of alice for `crm`. */
export const ALICE_LOGIN = {"sessionId": "zJ4vXW8Yp2Qk3b9TnR1sLg", "user": {"~ClassName": "User", "~ObjectID": "USR00001", "~StoreTime": "20261121T055408+00:00", "Name": "alice", "Description": "Alice Schmidt", "Groups": {"~Count": 2, "~UnfilteredCount": 2, "~Elements": [{"~ClassName": "UserGroup", "~ObjectID": "GRP00001", "~StoreTime": "20261121T055408+00:00", "Name": "admins", "Description": "Administrators"}, {"~ClassName": "UserGroup", "~ObjectID": "GRP00002", "~StoreTime": "20261121T055408+00:00", "Name": "sales", "Description": "Sales team"}]}, "Employee": {"~ClassName": "Employee", "~ObjectID": "EMP00001", "~StoreTime": "20261121T055408+00:00", "Name1": "Alice", "Name2": "Schmidt", "Name3": "Head of sales", "Bild": {"~ClassName": "Bild", "~ObjectID": "IMG00001", "~StoreTime": "20261121T055408+00:00"}, "Mitarbeiteransprechpartner": {"~ClassName": "ContactPerson", "~ObjectID": "CON00001", "~StoreTime": "20261121T055408+00:00", "Name": "carol", "Name1": "Carol", "Name2": "Meyer", "Name3": "Front office", "Bild": {"~ClassName": "Bild", "~ObjectID": "IMG00003", "~StoreTime": "20261125T225642+00:00"}}}}, "databaseName": "demo", "expiresAt": "2026-11-21T17:54:08.000Z", "acls": {"~Count": 1, "~Elements": [{"Oid": "USR00001:crm", "Status": 0, "UserName": "alice", "DeviceID": null, "LicenseKey": "crm", "LicenseLevel": null, "ParallelConnections": 0, "TFAActivated": false, "TFAConfirmed": false, "Application": "crm", "AddOns": {"~Count": 0, "~Elements": []}}]}};

/** `POST /v2/login` of dave with no applications. */
export const DAVE_TOKEN = {"token": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzaWQiOiIwbWktUnN5cXhsSUgzYm5XWUlvTHJRIiwic3ViIjoiZGF2ZSJ9.sig", "user": {"~ClassName": "User", "~ObjectID": "USR00003", "~StoreTime": "20261121T055408+00:00", "Name": "dave", "Description": "No licences: may only run macros", "Groups": {"~Count": 0, "~UnfilteredCount": 0, "~Elements": []}, "Employee": null}, "databaseName": "demo", "expiresAt": "2026-11-21T17:54:08.000Z", "acls": {"~Count": 0, "~Elements": []}};

/** `GET /v1/classes` as alice. */
export const CLASSES = {"~Count": 8, "~UnfilteredCount": 8, "~Elements": [{"Name": "Bild", "Declared": false, "Count": 4}, {"Name": "ContactPerson", "Declared": true, "Count": 1}, {"Name": "Customer", "Declared": true, "Count": 300}, {"Name": "Document", "Declared": true, "Count": 3}, {"Name": "Dokument", "Declared": false, "Count": 0}, {"Name": "Employee", "Declared": true, "Count": 3}, {"Name": "User", "Declared": true, "Count": 1}, {"Name": "UserGroup", "Declared": true, "Count": 3}]};

/** `GET /v1/object/EMP00001/referencedBy?perPage=2&serialization={"type":"custom","custom":{"fieldList":["Name"]}}` as alice. */
export const REFERENCED_BY = {"~Count": 2, "~UnfilteredCount": 151, "~Elements": [{"~ClassName": "Customer", "~ObjectID": "CUS00001", "~StoreTime": "20261121T055408+00:00", "Name": "Ben Bauer"}, {"~ClassName": "Customer", "~ObjectID": "CUS00003", "~StoreTime": "20261121T055408+00:00", "Name": "David Bauer"}]};

/** A reference below the serialization depth. */
export const REFERENCE = {"~ClassName": "Bild", "~ObjectID": "IMG00003", "~StoreTime": "20261125T225642+00:00"};

/** `GET /v2/login/key` and `/v2/login/secure/key` of the demo: the server's public key (a PEM with CR LF line breaks). */
export const SERVER_KEY = "-----BEGIN PUBLIC KEY-----\r\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAsL4EjE0Ql9eQWBoYnd40\r\nmb5WESOA7dAsIjFWEZE2w11ce7DMf/eUFX/IlQXsn0rDigyVFSqimGNFD5keNzOv\r\nXMA8UYo2UXB4ii8dtua2mLt3NoxxY6dsIAZ4ReyIGPl3LSH3kYY9UDCW5v17swCN\r\n8+U+hs0zIh4iVHRpycK3IvOLFE9Lv2yZfj/Jc0DAThgwQRhvnKj87x9DFpE2vMre\r\n1GrRX2TE6781hoPjVC5rBsvCyQbO9eInMvH5zk6lg/OxBTjRfSQYfA2ab+vGr6qR\r\n9POaw9aIylezGMXVwfliAmULzgcs3Dlxxdxd+xhUKtTRuc8RIxpqiUI2Kpnf0p9e\r\nOQIDAQAB\r\n-----END PUBLIC KEY-----\r\n";

/** `GET /v1/users?perPage=2` on the demo, as alice (an administrator). */
export const USERS = {
  '~Count': 2,
  '~UnfilteredCount': 4,
  '~Elements': [
    { '~ObjectID': 'USR00001', Name: 'alice', Description: 'Alice Schmidt', Disabled: false, Groups: ['admins', 'sales'], TwoFactor: false, Passkeys: 0 },
    { '~ObjectID': 'USR00002', Name: 'bob', Description: 'Bob Weber', Disabled: false, Groups: ['support'], TwoFactor: false, Passkeys: 0 },
  ],
};
