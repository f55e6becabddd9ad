; Inno Setup script for Windows: installs dist\ctxviewer (built by PyInstaller
; on Windows with `pyinstaller --noconfirm packaging\ctxviewer.spec`) and
; associates .jsonl / .ndjson logs with ctxviewer ("Open with" for .json).
;   iscc packaging\ctxviewer.iss
#define AppName "ctxviewer"
#define AppVersion "0.1.0"

[Setup]
AppId={{6E0C3C0E-5B59-4B8E-9D5E-CTXVIEWER0001}
AppName={#AppName}
AppVersion={#AppVersion}
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
OutputBaseFilename=ctxviewer-{#AppVersion}-setup
SetupIconFile=..\resources\icons\ctxviewer.ico
ChangesAssociations=yes
PrivilegesRequiredOverridesAllowed=dialog

[Files]
Source: "..\dist\ctxviewer\*"; DestDir: "{app}"; Flags: recursesubdirs ignoreversion

[Icons]
Name: "{group}\{#AppName}"; Filename: "{app}\ctxviewer.exe"

[Registry]
; ProgID
Root: HKA; Subkey: "Software\Classes\ctxviewer.session"; ValueType: string; ValueName: ""; ValueData: "LLM agent session log"; Flags: uninsdeletekey
Root: HKA; Subkey: "Software\Classes\ctxviewer.session\DefaultIcon"; ValueType: string; ValueName: ""; ValueData: "{app}\ctxviewer.exe,0"
Root: HKA; Subkey: "Software\Classes\ctxviewer.session\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\ctxviewer.exe"" ""%1"""
; .jsonl and .ndjson open with ctxviewer; .json gets an "Open with" entry only
Root: HKA; Subkey: "Software\Classes\.jsonl\OpenWithProgids"; ValueType: string; ValueName: "ctxviewer.session"; ValueData: ""; Flags: uninsdeletevalue
Root: HKA; Subkey: "Software\Classes\.ndjson\OpenWithProgids"; ValueType: string; ValueName: "ctxviewer.session"; ValueData: ""; Flags: uninsdeletevalue
Root: HKA; Subkey: "Software\Classes\.json\OpenWithProgids"; ValueType: string; ValueName: "ctxviewer.session"; ValueData: ""; Flags: uninsdeletevalue
Root: HKA; Subkey: "Software\Classes\Applications\ctxviewer.exe\SupportedTypes"; ValueType: string; ValueName: ".jsonl"; ValueData: ""
